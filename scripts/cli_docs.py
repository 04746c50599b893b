#!/usr/bin/env python3
# Regenerates the verb reference of docs/cli.md from positionlab-cli's own --help texts, keeping the hand-written text.
"""Usage: python3 scripts/cli_docs.py [--check] [CLI]   (CLI: default build/bin/positionlab-cli)

docs/cli.md's "## Verb reference" holds, for the overview and for every verb, a block between
    <!-- BEGIN positionlab-cli VERB --help -->  and  <!-- END positionlab-cli VERB --help -->
whose content is the verb's --help, verbatim, in a ```text fence. This script replaces each block's content with what
the CLI prints now and appends a heading and a block for a verb the page lacks; the text between the blocks
(headings and the hand-written notes) is kept as it is. A block for a verb the CLI no longer has is an error, to be
removed by hand with its notes. --check changes nothing and exits 1 when the page is not current (tst_docs checks
the verbs and options themselves; this keeps the whole help text true).
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli.md"
SECTION = "## Verb reference"
BLOCK = re.compile(r"<!-- BEGIN positionlab-cli (?:(\S+) )?--help -->\n.*?<!-- END positionlab-cli (?:(\S+) )?--help -->",
                   re.S)


def run(cli, *args):
    result = subprocess.run([cli, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"cli_docs: `{cli} {' '.join(args)}` exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def verbs_of(overview):
    verbs, listing = [], False
    for line in overview.splitlines():
        if line.strip() == "verbs:":
            listing = True
        elif listing and not line.strip():
            break
        elif listing:
            verbs.append(line.split()[0])
    if not verbs:
        sys.exit("cli_docs: no verbs in the overview (`positionlab-cli --help`)")
    return verbs


def block(verb, text):
    name = f"{verb} " if verb else ""
    return (f"<!-- BEGIN positionlab-cli {name}--help -->\n```text\n{text.rstrip()}\n```\n"
            f"<!-- END positionlab-cli {name}--help -->")


def regenerate(page, cli):
    overview = run(cli, "--help")
    helps = {"": overview}
    for verb in verbs_of(overview):
        helps[verb] = run(cli, verb, "--help")
    if SECTION not in page:
        page = page.rstrip("\n") + f"\n\n{SECTION}\n\n{block('', overview)}\n"
    seen = set()

    def replace(match):
        verb = match.group(1) or ""
        if verb != (match.group(2) or ""):
            sys.exit(f"cli_docs: a BEGIN marker for '{verb}' closes with an END marker for '{match.group(2)}'")
        if verb not in helps:
            sys.exit(f"cli_docs: docs/cli.md documents '{verb}', which `positionlab-cli --help` does not list: "
                     "remove its heading, notes and block by hand")
        seen.add(verb)
        return block(verb, helps[verb])

    page = BLOCK.sub(replace, page)
    missing = [verb for verb in helps if verb not in seen]
    if missing:
        # New verbs go at the end of the verb reference: before the next "## " heading, or at the end of the page.
        start = page.index(SECTION) + len(SECTION)
        after = page.find("\n## ", start)
        end = len(page.rstrip("\n")) if after < 0 else after
        added = "".join(f"\n\n### `{verb}`\n\n{block(verb, helps[verb])}" if verb else f"\n\n{block('', overview)}"
                        for verb in missing)
        page = page[:end].rstrip("\n") + added + "\n" + page[end:]
    return page.rstrip("\n") + "\n"


def main(argv):
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    cli = rest[0] if rest else str(ROOT / "build" / "bin" / "positionlab-cli")
    old = PAGE.read_text(encoding="utf-8")
    new = regenerate(old, cli)
    if check:
        if new != old:
            print("cli_docs: docs/cli.md is not current; run python3 scripts/cli_docs.py", file=sys.stderr)
            return 1
        return 0
    if new != old:
        temporary = PAGE.with_name(PAGE.name + ".tmp")  # replaced whole or not at all
        temporary.write_text(new, encoding="utf-8")
        temporary.replace(PAGE)
        print("cli_docs: docs/cli.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
