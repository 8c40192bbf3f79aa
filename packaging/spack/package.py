# Spack recipe for railbench: copy it to packages/railbench/package.py of a Spack package repository
# (`spack repo create myrepo`, `spack repo add myrepo`), then `spack install railbench`.
#
# What was tested (Debian 12, 2026-11-25): the file parses as Python; the make command lines it runs
# (`make all CC=mpicc HTTP_PARSER_H=<prefix>/include/http_parser.h` and `make install PREFIX=<prefix>`)
# build and install railbench, its man pages and bash completion from a plain checkout against Debian's
# libraries. What was NOT tested: Spack itself (it is not installed on the development machine, and the
# machine fetches no source from the internet), so neither `spack install railbench` nor the concretisation
# of these dependencies has been run; the `git` URL below is a placeholder for the repository you cloned
# railbench from. Versions follow the project's tags (vX.Y.Z; `railbench version` shows git describe).

from spack.package import *


class Railbench(MakefilePackage):
    """Benchmarks and load generation for the data paths of AI clusters: object storage over HTTP, S3 and
    AIStore (direct, through a caching tier, cold and warm), block devices through fio, collectives over MPI
    ranks with nccl-tests' flags and table, and the hosts' disk and network counters, in one MPI-coordinated
    binary."""

    homepage = "https://example.invalid/railbench"
    git = "https://example.invalid/railbench.git"  # placeholder: the repository you cloned railbench from

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    depends_on("gmake", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3:", type="build")  # scripts/gen-man.py writes the man pages and completion
    depends_on("git", type="build")  # the version compiled in comes from git describe

    depends_on("mpi")
    depends_on("curl")
    depends_on("cjson")
    depends_on("libmicrohttpd")
    depends_on("hwloc@2:")
    depends_on("http-parser")
    depends_on("openssl")
    depends_on("liburing")
    depends_on("protobuf-c")  # the protobuf exposition format (libprotobuf-c; protoc-c at build time)
    depends_on("zlib")  # load train --format npz: the zip members' CRC-32
    depends_on("libjpeg-turbo")  # load train --format jpeg: the encoder and --decode

    # At run time: fio for `railbench block` (not a Spack dependency: the system's fio is what users test).

    def _make_args(self):
        spec = self.spec
        return [
            "CC={0}".format(spec["mpi"].mpicc),
            "HTTP_PARSER_H={0}".format(join_path(spec["http-parser"].prefix.include, "http_parser.h")),
        ]

    def build(self, spec, prefix):
        make("all", *self._make_args())

    def install(self, spec, prefix):
        make("install", "PREFIX={0}".format(prefix), *self._make_args())
