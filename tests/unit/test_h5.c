#include <criterion/criterion.h>
Test(placeholder, h5) { cr_assert(1); }
