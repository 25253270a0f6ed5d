/* placeholder: being written */
typedef int sp_placeholder_h5_merge;
