#!/usr/bin/env python3
"""Prints a key for each C++ source named on standard input: the SHA-256 of everything clang-tidy's
verdict on it depends on. That is clang-tidy's version, the .clang-tidy file, the extra arguments
lint.sh passes, the compile command (less -g, the sanitizers' flags, the forced json_assert.h and a launcher), and the source as the preprocessor expands it with its comments
kept (every header it includes, NOLINT comments included). Paths under the checkout are written
relative to it, so that a clone elsewhere gets the same keys.

Usage: tidy_keys.py BUILD_DIR EXTRA_ARG... < sources; prints "KEY PATH" lines.
"""

import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys


def without_forced_json_assert(args):
    out = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "-include" and i + 1 < len(args) and args[i + 1].endswith("common/json_assert.h"):
            skip = True
            continue
        out.append(arg)
    return out


def compile_commands(build_dir, root):
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    commands = {}
    for entry in entries:
        args = entry.get("arguments") or shlex.split(entry["command"])
        # A compiler launcher (ccache) and whether debug information is made change nothing
        # clang-tidy sees.
        if os.path.basename(args[0]) in ("ccache", "sccache", "distcc"):
            args = args[1:]
        # Nor do the sanitizers' flags, which only instrument the code made, or the header
        # forced ahead of every file that makes nlohmann::json's failed checks throw (what the
        # library does on a misuse, not what the code says).
        args = [a for a in args if not a.startswith(("-g", "-fsanitize", "-fno-sanitize"))
                and a != "-fno-omit-frame-pointer"]
        args = without_forced_json_assert(args)
        path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
        commands[path] = (entry["directory"], args)
    return commands


def preprocess_args(args, extra):
    """The compile command turned into one that only preprocesses, keeping comments."""
    out = ["clang++-19"]
    skip = False
    for arg in args[1:]:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c":
            out.append(arg)
    return out + extra + ["-E", "-C", "-w"]


def key(path, commands, common, extra, root):
    if path not in commands:
        return path, None
    directory, args = commands[path]
    run = subprocess.run(preprocess_args(args, extra), cwd=directory, capture_output=True, check=False)
    if run.returncode != 0:
        return path, None
    digest = hashlib.sha256(common)
    digest.update(" ".join(args).replace(root, ".").encode())
    digest.update(run.stdout.replace(root.encode(), b"."))
    return path, digest.hexdigest()


def main():
    build_dir, extra = sys.argv[1], sys.argv[2:]
    root = os.getcwd()
    version = subprocess.run(["clang-tidy-19", "--version"], capture_output=True, check=True).stdout
    with open(".clang-tidy", "rb") as f:
        common = version + f.read() + " ".join(extra).encode()
    commands = compile_commands(build_dir, root)
    paths = [line.strip() for line in sys.stdin if line.strip()]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        jobs = [pool.submit(key, p, commands, common, extra, root) for p in paths]
        for job in jobs:
            path, digest = job.result()
            # A file that cannot be keyed gets a key that matches nothing, so it is always checked.
            print(digest or "unkeyed", path)


if __name__ == "__main__":
    main()
