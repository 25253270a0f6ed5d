#!/usr/bin/python3
"""Man pages and bash completion of the scopeprof command, generated from
the command itself so neither can drift from --help:

  scopeprof.1            from `scopeprof --help` (the command list)
  scopeprof-CMD.1        from `scopeprof CMD --help`, for every command listed
  scopeprof.7            the environment variables: every row of README.md's
                         tables whose first cell is a `SCOPE_PROFILER_*` or
                         `SCOPEPROF_*` variable (the README is the one source)
  scopeprof.bash         bash completion: commands, each command's options,
                         export formats (the "formats:" section of a help)

Usage: gen_man.py SCOPEPROF README.md VERSION OUTDIR STAMP
       gen_man.py --install OUTDIR   (meson install script: copy to share/)

The --help texts follow one layout (src/cli/cmd_*.c): a "usage:" line,
paragraphs, sections headed "name:" or "name (note):" at column 0 whose
items are "  TERM  description" with continuation lines indented further,
and closing paragraphs ("Exit status: ...")."""
import os
import re
import shutil
import subprocess
import sys

META_COMMANDS = ("help", "version")  # listed by --help, no page of their own


def run_help(exe, *args):
    r = subprocess.run([exe, *args, "--help"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gen_man.py: {exe} {' '.join(args)} --help exited {r.returncode}: {r.stderr}")
    return r.stdout


def parse_help(text):
    """-> (usage, [blocks]); a block is ('para', [lines]) or
    ('section', title, note, [(term, description)])."""
    lines = text.rstrip("\n").split("\n")
    usage = ""
    if lines and lines[0].startswith("usage: "):
        usage = lines.pop(0)[len("usage: "):]
    blocks, i = [], 0
    header = re.compile(r"^([a-z][a-z -]*?)(?: \((.*)\))?:$")
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        m = header.match(line)
        if m:
            items, i, desc_col = [], i + 1, None
            while i < len(lines) and lines[i].startswith(" "):
                raw = lines[i]
                indent = len(raw) - len(raw.lstrip())
                body = raw.strip()
                if items and desc_col is not None and indent >= desc_col - 1:
                    term, desc = items[-1]
                    items[-1] = (term, (desc + " " + body).strip())
                else:
                    parts = re.split(r"\s{2,}", body, maxsplit=1)
                    items.append((parts[0], parts[1] if len(parts) > 1 else ""))
                    if len(parts) > 1:
                        desc_col = raw.index(parts[1], indent + len(parts[0]))
                i += 1
            blocks.append(("section", m.group(1), m.group(2), items))
            continue
        para = []
        while i < len(lines) and lines[i].strip() and not header.match(lines[i]) and \
                not (para and lines[i].startswith("Exit status:")):
            para.append(lines[i].strip())
            i += 1
        blocks.append(("para", para))
    return usage, blocks


def roff(text):
    """Escape plain text for roff; `code` becomes bold."""
    text = text.replace("\\", "\\e")
    parts = re.split(r"`([^`]*)`", text)
    out = []
    for k, part in enumerate(parts):
        part = part.replace("-", "\\-") if k % 2 else part
        out.append(f"\\fB{part}\\fR" if k % 2 else part)
    text = "".join(out)
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def option_term(term):
    """Options in bold, their arguments in italics."""
    words = []
    for w in term.split(" "):
        w = w.replace("\\", "\\e")
        m = re.match(r"^(-[-\w]*)(=?)(.*?)(,?)$", w)
        if m and w.startswith("-"):
            arg = m.group(3)
            words.append("\\fB" + m.group(1).replace("-", "\\-") + "\\fR" + m.group(2)
                         + (f"\\fI{arg}\\fR" if arg else "") + m.group(4))
        else:
            words.append(f"\\fI{w}\\fR" if w.isupper() else w)
    return " ".join(words)


def th(name, section, version):
    return [f'.TH {name.upper()} {section} "" "scopeprof {version}" "scopeprof manual"']


def blocks_to_roff(blocks):
    out, in_description = [], True
    for b in blocks:
        if b[0] == "para":
            text = " ".join(b[1])
            if text.startswith("Exit status:"):
                out += [".SH EXIT STATUS", roff(text[len("Exit status:"):].strip())]
                in_description = False
            else:
                if not in_description and not out[-1].startswith(".SH NOTES"):
                    out.append(".SH NOTES")
                out += [".PP", roff(text)]
        else:
            _, title, note, items = b
            in_description = False
            out.append(".SH " + title.upper())
            if note:
                out += [".PP", roff(note[0].upper() + note[1:] + ".")]
            for term, desc in items:
                out += [".TP", option_term(term), roff(desc)]
    return out


def command_page(exe, cmd, summary, version, all_commands):
    usage, blocks = parse_help(run_help(exe, cmd))
    out = th(f"scopeprof-{cmd}", 1, version)
    out += [".SH NAME", f"scopeprof\\-{cmd} \\- {roff(summary)}", ".SH SYNOPSIS"]
    words = usage.split(" ", 2)
    out.append(".B " + " ".join(words[:2]))
    if len(words) > 2:
        out.append(option_term(words[2]))
    out.append(".SH DESCRIPTION")
    body = blocks_to_roff(blocks)
    if body and body[0] == ".PP":
        body = body[1:]
    out += body
    others = [f"\\fBscopeprof\\-{c}\\fR(1)" for c in all_commands if c != cmd]
    out += [".SH SEE ALSO", ", ".join(["\\fBscopeprof\\fR(1)"] + others +
                                      ["\\fBscopeprof\\fR(7)"])]
    return out, blocks


def main_page(exe, commands, version):
    out = th("scopeprof", 1, version)
    out += [".SH NAME", "scopeprof \\- report and export region profiles of HPC programs",
            ".SH SYNOPSIS", ".B scopeprof", "\\fIcommand\\fR [\\fIoptions\\fR] \\fIFILES\\fR...",
            ".br", ".B scopeprof help", "\\fIcommand\\fR",
            ".br", ".B scopeprof version",
            ".SH DESCRIPTION",
            "Programs run with \\fBlibscopeprof.so\\fR preloaded (\\fBscopeprof run\\fR, or "
            "\\fBLD_PRELOAD\\fR) write one HDF5 file per MPI rank holding every call of their "
            "marked regions; \\fBscopeprof\\fR reports and exports those files.  The shim is "
            "configured by environment variables: \\fBscopeprof\\fR(7).",
            ".SH COMMANDS"]
    for cmd, summary in commands:
        out += [".TP", f"\\fBscopeprof\\-{cmd}\\fR(1)", roff(summary)]
    out += [".TP", "\\fBhelp\\fR \\fIcommand\\fR", "the same as \\fBscopeprof\\fR "
            "\\fIcommand\\fR \\fB\\-\\-help\\fR",
            ".TP", "\\fBversion\\fR, \\fB\\-\\-version\\fR, \\fB\\-V\\fR",
            "print the version",
            ".SH SEE ALSO",
            ", ".join([f"\\fBscopeprof\\-{c}\\fR(1)" for c, _ in commands] +
                      ["\\fBscopeprof\\fR(7)"])]
    return out


def env_page(readme, version):
    """Every variable row of README.md's tables, grouped by README section."""
    groups, section = [], None
    row = re.compile(r"^\|\s*`((?:SCOPE_PROFILER|SCOPEPROF)_[A-Z0-9_]+)`\s*\|(.*)\|\s*$")
    with open(readme, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                section = line[3:].strip()
            m = row.match(line)
            if not m:
                continue
            cells = [c.strip() for c in m.group(2).split("|")]
            default, meaning = (cells[0], " | ".join(cells[1:])) if len(cells) > 1 else ("", cells[0])
            if not groups or groups[-1][0] != section:
                groups.append((section, []))
            groups[-1][1].append((m.group(1), default, meaning))
    if not groups:
        sys.exit(f"gen_man.py: no variable table found in {readme}")
    out = th("scopeprof", 7, version)
    out += [".SH NAME", "scopeprof \\- environment variables of the scopeprof profiler",
            ".SH DESCRIPTION",
            "The preloaded shim \\fBlibscopeprof.so\\fR reads the \\fBSCOPE_PROFILER_*\\fR "
            "variables once, at load; the \\fBscopeprof\\fR command reads \\fBSCOPEPROF_*\\fR.  "
            "A malformed value gets one line on standard error naming the variable and what "
            "is expected; the default is used and the program runs on.  This page is "
            "generated from the tables of the README."]
    for section, rows in groups:
        if len(groups) > 1:
            out.append(".SH " + roff(section.upper()))
        else:
            out.append(".SH VARIABLES")
        for name, default, meaning in rows:
            out += [".TP", f"\\fB{name}\\fR (default: {roff(default)})", roff(meaning)]
    out += [".SH SEE ALSO", "\\fBscopeprof\\fR(1), \\fBscopeprof\\-run\\fR(1)"]
    return out


def options_of(blocks):
    opts = []
    for b in blocks:
        if b[0] == "section":
            for term, _ in b[3]:
                opts += [w.rstrip(",").split("=")[0] for w in term.split()
                         if w.startswith("-")]
    return opts


def formats_of(blocks):
    for b in blocks:
        if b[0] == "section" and b[1] == "formats":
            return [t.split()[0] for t, _ in b[3]]
    return []


def completion(commands, per_command):
    names = " ".join(c for c, _ in commands) + " " + " ".join(META_COMMANDS)
    cases = []
    for cmd, (opts, formats) in per_command.items():
        cases.append(f"        {cmd}) opts='{' '.join(sorted(set(opts)))}'; "
                     f"formats='{' '.join(formats)}' ;;")
    return f"""# bash completion for scopeprof (generated from its --help by gen_man.py)
_scopeprof()
{{
    local cur=${{COMP_WORDS[COMP_CWORD]}} cmd=${{COMP_WORDS[1]}} opts= formats= i
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur"))
        return
    fi
    case $cmd in
        help) [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "{' '.join(c for c, _ in commands)}" -- "$cur")); return ;;
{chr(10).join(cases)}
        *) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    # The first word after the command of a command with formats is one.
    if [ -n "$formats" ]; then
        local seen=0
        for ((i = 2; i < COMP_CWORD; i++)); do
            [[ ${{COMP_WORDS[i]}} != -* ]] && seen=1
        done
        if [ "$seen" -eq 0 ]; then
            COMPREPLY=($(compgen -W "$formats" -- "$cur"))
            return
        fi
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}}
complete -o filenames -F _scopeprof scopeprof
"""


def generate(exe, readme, version, outdir, stamp):
    usage, blocks = parse_help(subprocess.run([exe, "--help"], capture_output=True,
                                              text=True, check=True).stdout)
    commands = []
    for b in blocks:
        if b[0] == "section" and b[1] == "commands":
            # "  %-8s %s": a name of 8 or more characters is followed by a
            # single space, so the name is the first word, whatever follows.
            for term, desc in b[3]:
                name, _, rest = term.partition(" ")
                if name not in META_COMMANDS:
                    commands.append((name, (rest.strip() + " " + desc).strip()))
    if not commands:
        sys.exit("gen_man.py: `scopeprof --help` lists no commands")
    os.makedirs(outdir, exist_ok=True)
    for old in os.listdir(outdir):  # a command that went away loses its page
        os.unlink(os.path.join(outdir, old))

    def write(name, lines):
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    write("scopeprof.1", main_page(exe, commands, version))
    per_command = {}
    names = [c for c, _ in commands]
    for cmd, summary in commands:
        page, cblocks = command_page(exe, cmd, summary, version, names)
        write(f"scopeprof-{cmd}.1", page)
        per_command[cmd] = (options_of(cblocks), formats_of(cblocks))
    write("scopeprof.7", env_page(readme, version))
    with open(os.path.join(outdir, "scopeprof.bash"), "w", encoding="utf-8") as f:
        f.write(completion(commands, per_command))
    with open(stamp, "w", encoding="utf-8") as f:
        f.write("\n".join(sorted(os.listdir(outdir))) + "\n")


def install(outdir):
    """Meson install script: pages to share/man/man1 and man7, completion to
    share/bash-completion/completions (DESTDIR honoured)."""
    root = os.environ["MESON_INSTALL_DESTDIR_PREFIX"]
    for name in sorted(os.listdir(outdir)):
        src = os.path.join(outdir, name)
        if name.endswith((".1", ".7")):
            dest = os.path.join(root, "share", "man", "man" + name[-1])
        elif name == "scopeprof.bash":
            dest = os.path.join(root, "share", "bash-completion", "completions")
            name = "scopeprof"
        else:
            continue
        os.makedirs(dest, exist_ok=True)
        shutil.copyfile(src, os.path.join(dest, name))
        if not os.environ.get("MESON_INSTALL_QUIET"):
            print(f"Installing {src} to {dest}/{name}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--install":
        install(sys.argv[2])
    elif len(sys.argv) == 6:
        generate(*sys.argv[1:])
    else:
        sys.exit(__doc__)
