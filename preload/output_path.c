/* placeholder: being written */
typedef int sp_placeholder_output_path;
