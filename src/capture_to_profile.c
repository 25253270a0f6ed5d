/* placeholder: being written */
typedef int sp_placeholder_capture_to_profile;
