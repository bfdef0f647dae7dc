#!/usr/bin/env python3
"""Prints the `swift test --skip` pattern of the suites tagged needsRoot or needsServices (Tests/TestSupport/Tags.swift).

`make test-fast` runs every other test. Swift 6.3's `swift test` cannot select by tag (`--skip tag:needsRoot` is read
as a pattern of test names and matches nothing), so the tagged suites are found here, in the sources: a top-level
`@Suite(...)` whose arguments name one of the tags, and the type it is put on. A tag written anywhere else (on a
@Test, on a nested suite) would be left out of the pattern without a word, so it is an error instead.
"""
import pathlib
import re
import sys

TAGS = ("needsRoot", "needsServices")
TESTS = pathlib.Path(__file__).resolve().parent.parent / "Tests"
DECLARATION = re.compile(r"\s*(?:@\w+\s+)*(?:(?:final|public|private|fileprivate|internal)\s+)*(?:struct|class|enum|actor)\s+(\w+)")


def attribute_end(text, open_paren):
    """The index after the parenthesis that closes the one at `open_paren`, skipping what is inside strings."""
    depth, i, in_string = 0, open_paren, False
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced @Suite(")


def tag_uses(text, start=0, end=None):
    """Where `.needsRoot` and `.needsServices` are written in text[start:end]."""
    return {start + m.start() for tag in TAGS for m in re.finditer(r"\." + tag + r"\b", text[start:end])}


def tagged_suites():
    suites, errors = {}, []
    for path in sorted(TESTS.rglob("*.swift")):
        if path.parent.name == "TestSupport":
            continue
        module, text = path.relative_to(TESTS).parts[0], path.read_text()
        placed = set()
        for match in re.finditer(r"^@Suite\(", text, re.MULTILINE):
            end = attribute_end(text, match.end() - 1)
            uses = tag_uses(text, match.end(), end)
            if not uses:
                continue
            declared = DECLARATION.match(text, end)
            if declared:
                suites.setdefault(module, []).append(declared.group(1))
                placed |= uses
        for at in sorted(tag_uses(text) - placed):
            errors.append(f"{path}:{text.count(chr(10), 0, at) + 1}: a tag outside a top-level @Suite(...) on a type: "
                          "make test-fast would not leave it out")
    return suites, errors


def main():
    suites, errors = tagged_suites()
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    if not suites:
        print("^$")  # nothing is tagged: skip nothing
        return 0
    modules = "|".join(f"{module}\\.({'|'.join(names)})" for module, names in sorted(suites.items()))
    print(f"^({modules})(/|$)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
