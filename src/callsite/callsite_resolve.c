/* callsite_resolve.c - see callsite_resolve.h.
 *
 * Each module file is reported alone to an offline libdwfl session at bias 0,
 * so the file addresses the shim computed (return address - 1 - load bias)
 * are module addresses as they are: PIE, shared libraries, dlopen'ed ones and
 * non-PIE executables alike. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callsite/callsite_resolve.h"

#ifdef SP_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

/* gfortran's names for the procedures of module scope_profiler: the C entry
 * point is called from them, the user's line is one frame further out. */
static const char FORTRAN_MODULE_PREFIX[] = "__scope_profiler_MOD_";

struct opened_module {
    char *path;
#ifdef SP_HAVE_LIBDW
    Dwfl *dwfl;
    Dwfl_Module *module;   /* NULL: could not be read */
#endif
};

struct sp_callsite_resolver {
    struct opened_module *modules;
    size_t count, cap;
};

sp_callsite_resolver *sp_callsite_resolver_new(void)
{
    return calloc(1, sizeof(sp_callsite_resolver));
}

void sp_callsite_resolver_free(sp_callsite_resolver *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
#ifdef SP_HAVE_LIBDW
        if (r->modules[i].dwfl)
            dwfl_end(r->modules[i].dwfl);
#endif
        free(r->modules[i].path);
    }
    free(r->modules);
    free(r);
}

/* What one frame resolves to. */
struct frame_info {
    const char *symbol;    /* ELF symbol, NULL: unknown */
    char function[256];
    char file[1024];
    int64_t line;
};

#ifdef SP_HAVE_LIBDW
/* Separate debug information by build id, on this machine only.  Not
 * dwfl_standard_find_debuginfo: with DEBUGINFOD_URLS set it asks debuginfod
 * servers over the network (at exit of every profiled process), and its
 * client (curl, OpenSSL) crashes in the writer's link namespace. */
static int find_local_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                Dwarf_Addr base, const char *file_name,
                                const char *debuglink_file, GElf_Word debuglink_crc,
                                char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file,
        (void)debuglink_crc;
    const unsigned char *id = NULL;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &id, &vaddr);
    if (len < 2 || len > 64)
        return -1;
    char path[200];
    int n = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (int i = 1; i < len; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x", id[i]);
    snprintf(path + n, sizeof path - (size_t)n, ".debug");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && debuginfo_file_name)
        *debuginfo_file_name = strdup(path);
    return fd;
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_local_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static struct opened_module *open_module(sp_callsite_resolver *r, const char *path)
{
    for (size_t i = 0; i < r->count; i++)
        if (!strcmp(r->modules[i].path, path))
            return &r->modules[i];
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        struct opened_module *grown = realloc(r->modules, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->modules = grown;
        r->cap = cap;
    }
    struct opened_module *m = &r->modules[r->count];
    memset(m, 0, sizeof *m);
    if (!(m->path = strdup(path)))
        return NULL;
    r->count++;
    m->dwfl = dwfl_begin(&offline_callbacks);
    if (m->dwfl) {
        dwfl_report_begin(m->dwfl);
        m->module = dwfl_report_elf(m->dwfl, path, path, -1, 0, true);
        dwfl_report_end(m->dwfl, NULL, NULL);
    }
    return m;
}

static int copy_die_name(Dwarf_Die *die, char *buf, size_t len)
{
    Dwarf_Attribute attr;
    const char *name = dwarf_attr_integrate(die, DW_AT_name, &attr) ? dwarf_formstring(&attr)
                                                                    : NULL;
    if (name)
        snprintf(buf, len, "%s", name);
    return name != NULL;
}

/* A subprogram containing pc anywhere below die.  Needed for Fortran
 * internal procedures: gfortran nests their DIE in the host procedure's,
 * whose address range does not contain theirs, so dwarf_getscopes misses
 * them. */
static int find_subprogram(Dwarf_Die *die, Dwarf_Addr pc, int depth, char *buf, size_t len)
{
    Dwarf_Die child;
    if (depth > 8 || dwarf_child(die, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram && dwarf_haspc(&child, pc) == 1 &&
            copy_die_name(&child, buf, len))
            return 1;
        if ((tag == DW_TAG_subprogram || tag == DW_TAG_module || tag == DW_TAG_namespace) &&
            find_subprogram(&child, pc, depth + 1, buf, len))
            return 1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* The compile unit holding addr (module address).  dwfl_module_addrdie
 * needs .debug_aranges, which clang does not write: then every unit's
 * ranges are tried. */
static int unit_at(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *unit, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
    if (cu) {
        *unit = *cu;
        return 1;
    }
    Dwarf *dwarf = dwfl_module_getdwarf(mod, bias);
    if (!dwarf)
        return 0;
    Dwarf_CU *it = NULL;
    while (dwarf_get_units(dwarf, it, &it, NULL, NULL, unit, NULL) == 0)
        if (dwarf_haspc(unit, addr - *bias) == 1)
            return 1;
    return 0;
}

/* The name of the innermost function (or inlined function) at addr, from
 * DWARF: the name written in the source, not the linker's. */
static void dwarf_function(Dwarf_Die *unit, Dwarf_Addr pc, char *buf, size_t len)
{
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(unit, pc, &scopes);
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
            found = copy_die_name(&scopes[i], buf, len);
    }
    free(scopes);
    if (!found)
        find_subprogram(unit, pc, 0, buf, len);
}

/* GCC's clones keep the function's name with a suffix (register.isra.0,
 * solve.constprop.1, step.part.0, work.0 for a Fortran internal procedure):
 * the user knows the function by the name before the dot. */
static void copy_symbol_name(const char *symbol, char *buf, size_t len)
{
    const char *dot = symbol[0] ? strchr(symbol + 1, '.') : NULL;
    size_t n = dot ? (size_t)(dot - symbol) : strlen(symbol);
    if (n >= len)
        n = len - 1;
    memcpy(buf, symbol, n);
    buf[n] = '\0';
}
#endif

/* "/a/build/../src/x.c" -> "/a/src/x.c": the real path when the file is
 * there, else the same path with "." and ".." folded. */
static void tidy_path(const char *in, char *out, size_t len)
{
    char real[PATH_MAX];
    if (realpath(in, real) && strlen(real) < len) {
        memcpy(out, real, strlen(real) + 1);
        return;
    }
    size_t kept = strnlen(in, len - 1);   /* truncated like snprintf */
    memcpy(out, in, kept);
    out[kept] = '\0';
    if (in[0] != '/')
        return;
    size_t o = 0;
    for (const char *s = in; *s;) {
        while (*s == '/')
            s++;
        const char *end = strchr(s, '/');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        if (n == 0)
            break;
        if (n == 1 && s[0] == '.') {
            /* nothing */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (o > 0 && out[--o] != '/')
                ;
        } else if (o + 1 + n < len) {
            out[o++] = '/';
            memcpy(out + o, s, n);
            o += n;
        }
        s += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
}

static void resolve_frame(sp_callsite_resolver *r, const sp_capture_frame *f,
                          struct frame_info *info)
{
    memset(info, 0, sizeof *info);
    info->line = -1;
    if (!f->module_path)
        return;
#ifdef SP_HAVE_LIBDW
    struct opened_module *m = open_module(r, f->module_path);
    if (!m || !m->module)
        return;
    Dwarf_Addr addr = f->address, bias = 0;
    info->symbol = dwfl_module_addrname(m->module, addr);
    Dwarf_Die unit;
    if (unit_at(m->module, addr, &unit, &bias)) {
        Dwarf_Line *line = dwarf_getsrc_die(&unit, addr - bias);
        int lineno = 0;
        const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
        if (file && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
            /* A relative line-table directory (DWARF 5 as GCC writes it
             * for "../src/x.c") is relative to the unit's compilation
             * directory, not to the profiled program's working directory. */
            char joined[PATH_MAX];
            Dwarf_Attribute attr;
            const char *comp_dir = file[0] != '/' && dwarf_attr(&unit, DW_AT_comp_dir, &attr)
                                       ? dwarf_formstring(&attr)
                                       : NULL;
            if (comp_dir && comp_dir[0] == '/' &&
                (size_t)snprintf(joined, sizeof joined, "%s/%s", comp_dir, file) < sizeof joined)
                file = joined;
            tidy_path(file, info->file, sizeof info->file);
            info->line = lineno;
        }
        dwarf_function(&unit, addr - bias, info->function, sizeof info->function);
    }
#else
    (void)r;
#endif
    if (!info->function[0] && info->symbol)
        copy_symbol_name(info->symbol, info->function, sizeof info->function);
}

int sp_callsite_resolve(sp_callsite_resolver *r, const sp_capture_frame *frames,
                        size_t num_frames, sp_callsite *site)
{
    memset(site, 0, sizeof *site);
    site->line = -1;
    if (!num_frames)
        return -1;
    struct frame_info info;
    size_t pick = 0;
    for (size_t i = 0; i < num_frames; i++) {
        resolve_frame(r, &frames[i], &info);
        if (!info.symbol ||
            strncmp(info.symbol, FORTRAN_MODULE_PREFIX, sizeof FORTRAN_MODULE_PREFIX - 1)) {
            pick = i;
            break;
        }
        /* Every frame inside the module (cannot happen from user code):
         * the innermost one is still better than nothing. */
        if (i + 1 == num_frames)
            resolve_frame(r, &frames[0], &info);
    }
    const sp_capture_frame *f = &frames[pick];
    snprintf(site->function, sizeof site->function, "%s", info.function);
    if (info.line > 0) {
        snprintf(site->file, sizeof site->file, "%s", info.file);
        site->line = info.line;
    } else if (f->module_path) {
        const char *name = f->module_name && f->module_name[0] ? f->module_name : f->module_path;
        const char *slash = strrchr(name, '/');
        snprintf(site->file, sizeof site->file, "%s+0x%llx", slash ? slash + 1 : name,
                 (unsigned long long)f->address);
    } else {
        snprintf(site->file, sizeof site->file, "0x%llx", (unsigned long long)f->address);
    }
    return 0;
}

void sp_callsite_format(const sp_callsite *site, char *buf, size_t len)
{
    if (site->line > 0) {
        const char *slash = strrchr(site->file, '/');
        const char *base = slash ? slash + 1 : site->file;
        if (site->function[0])
            snprintf(buf, len, "%s:%lld in %s", base, (long long)site->line, site->function);
        else
            snprintf(buf, len, "%s:%lld", base, (long long)site->line);
    } else if (site->function[0]) {
        snprintf(buf, len, "%s (%s)", site->file, site->function);
    } else {
        snprintf(buf, len, "%s", site->file);
    }
}
