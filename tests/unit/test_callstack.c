#include <criterion/criterion.h>
Test(placeholder, callstack) { cr_assert(1); }
