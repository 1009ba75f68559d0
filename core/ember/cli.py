"""The ``ember`` command: ``ember plugins`` lists plugins; ``ember train digits`` runs the
main job (a CNN on scikit-learn's digits, ``ember/train/digits.py``); ``ember run -n N
script.py`` starts a script on N ranks for ember.distributed (``mpiexec`` underneath).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig

from .parallel import set_num_threads


def _plugins(args) -> int:
    from .plugins import manager
    infos = manager.plugins()
    if not infos:
        from .plugins.hints import install_hint
        print(f"no ember plugins installed; for the default backend: {install_hint('cpu')}")
        return 1
    for info in infos:
        state = ("disabled" if info.disabled else "SKIPPED" if info.error else
                 "refused" if info.refused else
                 "unavailable" if info.unavailable else "loaded")
        print(f"{info.name:<16} {info.distribution} {info.version}  [{state}]")
        if info.error:
            print(f"    error: {info.error}")
        for why in (info.refused, info.unavailable):
            if why:
                print(f"    why: {why}")
        for hook, items in info.registered.items():
            for item in items:
                print(f"    {hook.removeprefix('ember_')}: {item}")
    return 0


def _train(args) -> int:
    from .train import JOBS
    if args.threads is not None:
        set_num_threads(args.threads)
    return JOBS[args.job].main(args)


def mpiexec() -> str | None:
    """The ``mpiexec`` beside this Python's console scripts (the mpich wheel's), else the
    one on ``PATH``; None when there is none."""
    here = sysconfig.get_path("scripts")
    return shutil.which("mpiexec", path=here) or shutil.which("mpiexec")


def _run(args) -> int:
    launcher = mpiexec()
    if launcher is None:
        print("ember run: mpiexec not found; `pip install ember-mpi` (it brings mpi4py and "
              "the mpich wheel's mpiexec) or put an MPI's mpiexec on PATH", file=sys.stderr)
        return 2
    if not os.path.isfile(args.script):
        print(f"ember run: no such script: {args.script}", file=sys.stderr)
        return 2
    cmd = [launcher, "-n", str(args.nproc)]
    if args.hostfile:
        cmd += ["-f", args.hostfile]
    cmd += [sys.executable, args.script, *args.args]
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:  # mpiexec got the SIGINT too and ends the ranks
        return 130


def _threads(text: str) -> int:
    """Parse ``--threads``: a positive int, else a usage error that says so."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of threads >= 1, got {text!r}; "
                                         f"use 1 on a machine shared with other busy work")
    return int(text)


def _ranks(text: str) -> int:
    """Parse ``ember run -n``: a positive int, else a usage error that says so."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of ranks >= 1, got {text!r}")
    return int(text)


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("ember")
    except metadata.PackageNotFoundError:  # run from a source tree without an install
        return "unknown (not installed)"


def main(argv=None) -> int:
    """Entry point of the ``ember`` console script."""
    parser = argparse.ArgumentParser(prog="ember", description=" ".join(
        __doc__.split("\n\n")[0].split()))
    parser.add_argument("--version", action="version", version=f"ember {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("plugins", help="list plugins, their versions and what they registered")
    t = sub.add_parser("train", help="run a training job: `ember train digits`")
    jobs = t.add_subparsers(dest="job", required=True)
    from .train import JOBS
    for name, job in JOBS.items():
        p = jobs.add_parser(name, help=job.__doc__.splitlines()[0],
                            formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        job.add_arguments(p)
        p.add_argument("--threads", type=_threads, default=None, metavar="N",
                       help="threads for ember and the BLAS (ember.set_num_threads); None "
                            "keeps ember.get_num_threads()")
    r = sub.add_parser("run", help="run a script on N ranks (mpiexec -n N python script.py)",
                       description="Start `python SCRIPT ARGS` on N ranks with mpiexec "
                                   "(hydra); in the script, ember.distributed."
                                   "init_process_group() finds its rank and world size.")
    r.add_argument("-n", "--nproc", type=_ranks, required=True, metavar="N",
                   help="number of ranks (processes)")
    r.add_argument("-f", "--hostfile", default=None, metavar="FILE",
                   help="mpiexec's host file: one `host[:ranks]` a line, to run on several "
                        "machines")
    r.add_argument("script", help="the Python script to run")
    r.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    args = parser.parse_args(argv)
    return {"plugins": _plugins, "train": _train, "run": _run}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
