/* placeholder: being written */
typedef int sp_placeholder_markers_noop;
