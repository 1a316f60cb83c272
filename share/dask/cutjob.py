#!/usr/bin/python3
# cutjob: cutstat's job view of the rank traces of a distributed job, each rank summarised
# (cutstat -j) by a Dask worker on the host that holds its trace; see cutjob(1).
import getopt
import glob
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile

VERSION = "@VERSION@"  # the build writes config.mk's VERSION here
USAGE = "usage: cutjob [-j] [--scheduler address] [--workers n] [host:]file ...\n"
HELP = USAGE + """
  -j, --json             print the job as JSON, what cutstat -j prints over the summaries
  --scheduler=address    use the cluster of this Dask scheduler, or of this scheduler file
  --workers=n            the local cluster's worker processes (1 to 4096)
  --help                 print this help and exit
  --version              print the version and exit
"""
MAX_WORKERS = 4096
EXIT_OK, EXIT_BAD, EXIT_FATAL, EXIT_READ = 0, 1, 2, 3


class Fatal(Exception):
    """A failure that stops cutjob: its message is printed as "cutjob: message"."""


def version():
    if not VERSION.startswith("@"):
        return VERSION
    # run from the source tree: the version is config.mk's
    mk = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "config.mk")
    try:
        with open(mk) as f:
            for line in f:
                if line.startswith("VERSION = "):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def warn(msg):
    sys.stderr.write("cutjob: %s\n" % msg)


def split_operand(op):
    """host:path as scp(1) reads it: a colon before any slash names a host (./a:b is a path)."""
    host, colon, path = op.partition(":")
    if colon and host and "/" not in host:
        return host, path
    return None, op


# Run by the workers (cloudpickle sends them by value: a worker needs no copy of this file).


def host_name():
    return socket.gethostname()


def identity(path):
    """What tells one file from another of the same path on another host: size, modification
    time and the first 64 KiB. Equal on two hosts: one file on a shared file system."""
    st = os.stat(path)
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            h.update(f.read(65536))
    except OSError:
        pass  # cutstat will say why it cannot be read
    return (st.st_size, st.st_mtime_ns, h.hexdigest())


def find(patterns):
    """Per absolute pattern, the files it names on this host, [(path, identity)] sorted by path,
    or the reason it names none. A glob names the files it matches that are no directories."""
    out = []
    for pat in patterns:
        if any(c in pat for c in "*?["):
            paths = [p for p in sorted(glob.glob(pat)) if not os.path.isdir(p)]
            why = "no file matches"
        elif os.path.isdir(pat):
            paths, why = [], "is a directory"
        elif os.path.lexists(pat):
            paths, why = [pat], None
        else:
            paths, why = [], "no such file"
        found = []
        for p in paths:
            try:
                found.append((p, identity(p)))
            except OSError as e:
                why = e.strerror
        out.append(found if found else why)
    return out


def summarize(cutstat, path, env):
    """cutstat -j PATH on this host: (exit status or None, its output, its messages, whether
    the output is a summary cutstat's job view reads)."""
    try:
        p = subprocess.run([cutstat, "-j", path], stdin=subprocess.DEVNULL, capture_output=True,
                           env=dict(os.environ, **env))
    except OSError as e:
        return None, b"", "cannot run %s: %s" % (cutstat, e.strerror), False
    try:
        ok = isinstance(json.loads(p.stdout).get("summary"), dict)
    except (ValueError, AttributeError):
        ok = False
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), ok


# The client.


class Rank:
    """One file of the job: where it is read, the workers that may read it, how it is named."""

    def __init__(self, path, shown, workers=None):
        self.path, self.shown, self.workers = path, shown, workers


def shown_path(match, given):
    """A match as the user wrote its operand: relative when the operand was."""
    if not os.path.isabs(given):
        cwd = os.getcwd().rstrip("/") + "/"
        if match.startswith(cwd):
            return match[len(cwd):]
    return match


def local_ranks(operands):
    """The files the operands name on this host, for a local cluster."""
    here = {"localhost", socket.gethostname(), socket.gethostname().split(".")[0],
            socket.getfqdn()}
    ranks, bad = [], []
    for host, pat in operands:
        if host is not None and host not in here:
            bad.append("%s:%s: no worker on host %s (a local cluster runs on %s only)"
                       % (host, pat, host, socket.gethostname()))
            continue
        res = find([os.path.abspath(pat)])[0]
        if isinstance(res, str):
            bad.append("%s: %s" % (pat if host is None else host + ":" + pat, res))
            continue
        ranks += [Rank(p, shown_path(p, pat)) for p, _ in res]
    return ranks, bad


def cluster_ranks(client, operands):
    """The files the operands name on the workers' hosts: an operand with a host on that
    host, one without on every host, a file found on several (a shared file system) once.
    A host is an address the scheduler sees workers at; it goes by that address, by the
    name its workers' machine gives itself (full or short), and by each worker's name."""
    workers = client.scheduler_info()["workers"]
    if not workers:
        raise Fatal("the scheduler has no workers")
    names = client.run(host_name)  # worker address -> its machine's name
    by_host, alias = {}, {}  # host -> its workers; a name -> the hosts it names
    for addr, w in sorted(workers.items()):
        by_host.setdefault(w["host"], []).append(addr)
        for a in (w["host"], names.get(addr), names.get(addr, "").split(".")[0], w.get("name")):
            if a not in (None, ""):
                alias.setdefault(str(a), set()).add(w["host"])
    hosts = sorted(by_host)
    # a host is shown by its machine's name where that names no other host
    shown_host = {h: h for h in hosts}
    for addr, n in names.items():
        h = workers[addr]["host"]
        if alias.get(n) == {h}:
            shown_host[h] = n
    pats = [os.path.abspath(p) for _, p in operands]
    found = client.run(find, pats, workers=[by_host[h][0] for h in hosts])
    found = {workers[a]["host"]: r for a, r in found.items()}
    ranks, bad = [], []
    for i, (host, pat) in enumerate(operands):
        shown = pat if host is None else host + ":" + pat
        if host is not None and host not in alias:
            bad.append("%s: no worker on host %s" % (shown, host))
            continue
        where = sorted(alias[host]) if host is not None else hosts
        files = {}  # path -> identity -> hosts
        for h in where:
            if not isinstance(found[h][i], str):
                for p, ident in found[h][i]:
                    files.setdefault(p, {}).setdefault(tuple(ident), []).append(h)
        if not files:
            why = found[where[0]][i]
            bad.append("%s: %s%s" % (shown, why, " on any worker's host" if len(where) > 1
                                     else ""))
            continue
        for p in sorted(files):
            for hs in sorted(files[p].values()):
                ranks.append(Rank(p, "%s:%s" % (shown_host[hs[0]], shown_path(p, pat)),
                                  [a for h in hs for a in by_host[h]]))
    return ranks, bad


def gather(client, ranks, cutstat, tmp):
    """Runs cutstat -j on every rank where its file is, writes the summaries to tmp in the
    ranks' order. Returns their paths and the exit status the job view is to end with."""
    env = {k: os.environ[k] for k in ("CUT_STRICT",) if k in os.environ}
    futures = [client.submit(summarize, cutstat, r.path, env, workers=r.workers,
                             allow_other_workers=False, pure=False) for r in ranks]
    paths, status, fatal = [], EXIT_OK, 0
    for k, (r, fut) in enumerate(zip(ranks, futures)):
        try:
            rc, out, msg, ok = fut.result()
        except Exception as e:  # the task or its worker died
            warn("%s: task failed: %s" % (r.shown, e))
            fatal += 1
            continue
        for line in msg.splitlines():
            warn("%s: %s" % (r.shown, line))
        if rc in (EXIT_OK, EXIT_BAD, EXIT_READ) and ok:
            status = max(status, rc)
            paths.append(os.path.join(tmp, "%06d.json" % k))
            with open(paths[-1], "wb") as f:
                f.write(out)
            continue
        fatal += 1
        if rc is None:
            continue
        if rc < 0:
            why = "cutstat killed by signal %d" % -rc
        elif rc:
            why = "cutstat failed (exit %d)" % rc
        else:
            why = "cutstat -j gave no summary (a summary or a job, not a trace?)"
        warn("%s: %s" % (r.shown, why))
    if fatal:
        raise Fatal("%d of %d ranks have no summary: no job view" % (fatal, len(ranks)))
    return paths, status


def parse(argv):
    try:
        opts, operands = getopt.gnu_getopt(argv, "j", ["json", "scheduler=", "workers="])
    except getopt.GetoptError as e:
        if not e.msg.endswith("not recognized"):
            warn(e.msg)
        elif len(e.opt) == 1:
            warn("invalid option -- '%s'" % e.opt)
        else:
            warn("unrecognized option '--%s'" % e.opt)
        sys.stderr.write(USAGE)
        sys.exit(EXIT_FATAL)
    o = {"json": False, "scheduler": None, "workers": None}
    for k, v in opts:
        if k in ("-j", "--json"):
            o["json"] = True
        elif k == "--scheduler":
            o["scheduler"] = v
        elif k == "--workers":
            if not v.isdigit() or not 1 <= int(v) <= MAX_WORKERS:
                raise Fatal("--workers: not a count from 1 to %d: %s" % (MAX_WORKERS, v))
            o["workers"] = int(v)
    if o["scheduler"] is not None and o["workers"] is not None:
        raise Fatal("--workers is for the local cluster; a scheduler has its own workers")
    if not operands:
        sys.stderr.write(USAGE)
        sys.exit(EXIT_FATAL)
    return o, [split_operand(op) for op in operands]


def run(o, operands):
    cutstat = os.environ.get("CUTSTAT", "cutstat")
    if o["scheduler"] is None:
        ranks, bad = local_ranks(operands)  # before the cluster starts, to fail fast
        if bad:
            for b in bad:
                warn(b)
            raise Fatal("%d of %d operands name no file" % (len(bad), len(operands)))
    try:
        import logging
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise Fatal("cannot import Dask's distributed (%s): install python3-distributed "
                    "(make deps)" % e)
    logging.getLogger("distributed").setLevel(logging.ERROR)  # its chatter is not ours to print
    # Nor asyncio's "Future exception was never retrieved" of a connection Dask closes as the
    # cluster stops (a loaded machine's make check had it twice on stderr; the job was right).
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="cutjob.") as tmp:
        if o["scheduler"] is None:
            n = o["workers"] or min(len(ranks), os.cpu_count() or 1)
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              dashboard_address=None, silence_logs=logging.ERROR,
                              local_directory=os.path.join(tmp, "dask")) as cluster, \
                    Client(cluster) as client:
                paths, status = gather(client, ranks, cutstat, tmp)
        else:
            addr = o["scheduler"]
            try:
                client = Client(scheduler_file=addr) if os.path.isfile(addr) else Client(addr)
            except (OSError, ValueError) as e:
                raise Fatal("%s: cannot reach the scheduler: %s" % (addr, e))
            with client:
                ranks, bad = cluster_ranks(client, operands)
                if bad:
                    for b in bad:
                        warn(b)
                    raise Fatal("%d of %d operands name no file" % (len(bad), len(operands)))
                paths, status = gather(client, ranks, cutstat, tmp)
        sys.stdout.flush()
        try:
            rc = subprocess.run([cutstat] + (["-j"] if o["json"] else []) + paths).returncode
        except OSError as e:
            raise Fatal("cannot run %s: %s" % (cutstat, e.strerror))
        return status if rc == 0 else EXIT_FATAL


def main(argv):
    if argv[:1] not in (["--help"], ["--version"]):
        try:
            return run(*parse(argv))
        except Fatal as e:
            warn(e)
            return EXIT_FATAL
    try:
        sys.stdout.write(HELP if argv[0] == "--help" else "cutjob %s\n" % version())
        sys.stdout.flush()
    except OSError as e:
        warn("write error on standard output: %s" % e.strerror)
        return EXIT_FATAL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
