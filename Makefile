# railbench — build, test, demo. `make V=1` shows full commands.

PREFIX ?= /usr/local
DESTDIR ?=
CC := mpicc
PKGS := libcurl libcjson libmicrohttpd hwloc openssl liburing zlib libjpeg
# Tags vX.Y.Z name releases; between them git describe gives vX.Y.Z-N-gHASH (debian/version.sh maps it).
VERSION := $(shell git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null || echo unknown)

# The Debian package behind each pkg-config name, for the one-line error when one is missing.
DEB_libcurl := libcurl4-openssl-dev
DEB_libcjson := libcjson-dev
DEB_libmicrohttpd := libmicrohttpd-dev
DEB_hwloc := libhwloc-dev
DEB_openssl := libssl-dev
DEB_liburing := liburing-dev
DEB_zlib := zlib1g-dev
DEB_libjpeg := libjpeg62-turbo-dev
DEB_cmocka := libcmocka-dev

# rb_pkg OPTION,NAMES: pkg-config OPTION for each name; a name pkg-config cannot find (or no pkg-config)
# stops make with one line naming the package, never an empty flag.
rb_pkg = $(if $(shell command -v pkg-config),,$(error pkg-config not found (Debian package pkg-config): run scripts/deps.sh as root)) \
    $(foreach p,$(2),$(if $(shell pkg-config --exists $(p) && echo y),$(shell pkg-config $(1) $(p)),\
        $(error pkg-config cannot find $(p) (Debian package $(or $(DEB_$(p)),providing $(p).pc)): run scripts/deps.sh as root)))
# rb_once VAR,VALUE: VALUE computed the first time a recipe uses VAR, then kept. Looked up lazily, the flags
# are right on the first run: `make demo` and `make test` install the packages before any recipe needs them.
rb_once = $(eval $(1) := $(2))$($(1))
rb_cc = $(if $(shell command -v $(CC)),$(CC),$(error compiler $(CC) not found (Debian package libopenmpi-dev for mpicc): run scripts/deps.sh as root))

CFLAGS ?= -O2 -g
SANFLAGS ?=
PKG_CFLAGS = $(call rb_once,PKG_CFLAGS,$(call rb_pkg,--cflags,$(PKGS)))
PKG_LIBS = $(call rb_once,PKG_LIBS,$(call rb_pkg,--libs,$(PKGS)))
CMOCKA_LIBS = $(call rb_once,CMOCKA_LIBS,$(call rb_pkg,--libs,cmocka))
CC_CHECKED = $(call rb_once,CC_CHECKED,$(rb_cc))
RB_CFLAGS = -std=c11 -Wall -Wextra -Wshadow -Iinclude -MMD -MP $(PKG_CFLAGS) $(HTTP_PARSER_CHECK) $(CFLAGS) $(SANFLAGS)
# http-parser ships no .pc file: its header stands for it, checked at the first compile with the same one-line
# error when it is missing (the check expands to nothing).
# HTTP_PARSER_H: where the header is (another prefix: Spack's, see packaging/spack/package.py).
HTTP_PARSER_H ?= /usr/include/http_parser.h
HTTP_PARSER_CHECK = $(call rb_once,HTTP_PARSER_CHECK,$(if $(wildcard $(HTTP_PARSER_H)),,\
    $(error http_parser.h not found (Debian package libhttp-parser-dev): run scripts/deps.sh as root)))
LDLIBS = $(PKG_LIBS) -lhttp_parser -lpthread -lm
TEST_LDLIBS = $(CMOCKA_LIBS) $(LDLIBS)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

ifeq ($(V),1)
Q :=
else
Q := @
endif

# SUFFIX selects the build flavour: "" normal, "asan" for make check.
B := build$(if $(SUFFIX),/$(SUFFIX))
# loader/ is sub-folders (engine, proto, objset, cmd, train, tiers); tests and fuzzers see their internal headers.
LOADER_INC := $(patsubst %/,-I%,$(sort $(wildcard loader/*/)))
SRC := $(wildcard core/*.c loader/*.c loader/*/*.c block/*.c collectives/*.c fabric/*.c reports/*.c)
OBJ := $(SRC:%.c=$(B)/obj/%.o)
LIBOBJ := $(filter-out $(B)/obj/core/main.o,$(OBJ))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
MPI_TEST_SRC := $(wildcard tests/mpi/*.c)
MPI_TEST_BIN := $(MPI_TEST_SRC:tests/mpi/%.c=$(B)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/fuzzers/%)
FUZZ_SECONDS ?= 10
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=build/bench/%)

.PHONY: all test unit check fuzz fuzzers demo demo-cluster bench install lint clean deps image FORCE

all: $(B)/railbench $(B)/man/stamp

# Man pages and bash completion, generated from the binary's own option tables (RAILBENCH_HELP=json).
MAN_PAGES := railbench railbench-load railbench-coll railbench-block railbench-fabric railbench-report
$(B)/man/stamp: $(B)/railbench scripts/gen-man.py
	@echo "  GEN     $(B)/man"
	$(Q)python3 scripts/gen-man.py $(B)/railbench $(B)/man
	$(Q)touch $@

deps:
	$(Q)scripts/deps.sh

$(B)/railbench: $(OBJ)
	@echo "  LINK    $@"
	$(Q)$(CC_CHECKED) $(RB_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC_CHECKED) $(RB_CFLAGS) -c -o $@ $<

# The version is compiled into result.c only; the stamp changes when git describe does.
$(B)/version.stamp: FORCE
	@mkdir -p $(B)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(B)/obj/core/result.o: RB_CFLAGS += -DRB_VERSION='"$(VERSION)"'
$(B)/obj/core/result.o: $(B)/version.stamp

# The collectives' reduction kernels must vectorise; GCC's -O2 cost model ("very cheap") leaves them scalar.
ifneq ($(SUFFIX),fuzz)
$(B)/obj/collectives/data.o: RB_CFLAGS += -fvect-cost-model=dynamic
endif

$(B)/tests/%: tests/mpi/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC_CHECKED) $(RB_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC_CHECKED) $(RB_CFLAGS) $(LOADER_INC) -Icollectives -Ifabric -Ireports $(LDFLAGS) -DRB_FIXTURES_DIR='"$(CURDIR)/tests/fixtures"' -o $@ $< $(LIBOBJ) $(TEST_LDLIBS)

build/bench/%: tests/bench/%.c $(filter-out build/obj/core/main.o,$(SRC:%.c=build/obj/%.o))
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC_CHECKED) $(RB_CFLAGS) -O2 -o $@ $< $(filter-out build/obj/core/main.o,$(SRC:%.c=build/obj/%.o)) $(LDLIBS)

unit: $(UNIT_BIN)
	$(Q)scripts/run-tests.sh unit $(UNIT_BIN)

# The targets a new user runs first install what they need (scripts/deps.sh), then build in a sub-make, on
# every core unless make was given -j already.
JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))
test: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) all $(UNIT_BIN) $(MPI_TEST_BIN)
	$(Q)OMPI_CC=clang $(MAKE) --no-print-directory $(JOBS) SUFFIX=fuzz CFLAGS="-O1 -g" \
	    SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" fuzzers
	$(Q)scripts/run-tests.sh all $(UNIT_BIN) $(FUZZ_BIN)

check: deps
	$(Q)$(MAKE) --no-print-directory SUFFIX=asan CFLAGS="-O1 -g" SANFLAGS="$(SAN)" LDFLAGS="$(SAN)" unit

# libFuzzer targets (clang): the library built with fuzzer instrumentation plus ASan/UBSan, each target
# run for FUZZ_SECONDS from its seed corpus in tests/fuzz/corpus/.
fuzz: deps
	$(Q)OMPI_CC=clang $(MAKE) --no-print-directory SUFFIX=fuzz CFLAGS="-O1 -g" \
	    SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" fuzzers
	$(Q)scripts/run-tests.sh fuzz $(FUZZ_BIN)

fuzzers: $(FUZZ_BIN)

build/fuzz/fuzzers/%: tests/fuzz/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $<"
	$(Q)$(CC_CHECKED) $(RB_CFLAGS) $(LOADER_INC) -fsanitize=fuzzer -o $@ $< $(LIBOBJ) $(LDLIBS)

demo: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) all
	$(Q)scripts/demo.sh

demo-cluster: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) all
	$(Q)scripts/demo-cluster.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) all $(BENCH_BIN)
	$(Q)scripts/run-bench.sh

# PREFIX/bin/railbench, its man pages, bash completion, and under PREFIX/share/railbench the Grafana
# dashboards and provisioning and the Ansible playbooks. BASH_COMPLETION_DIR: where bash-completion looks.
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/railbench $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(BASH_COMPLETION_DIR)
	install -m 0755 build/railbench $(DESTDIR)$(PREFIX)/bin/railbench
	install -m 0644 $(MAN_PAGES:%=build/man/man1/%.1) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 build/man/completion/railbench $(DESTDIR)$(BASH_COMPLETION_DIR)/railbench
	cp -r reports/grafana ansible $(DESTDIR)$(PREFIX)/share/railbench/
	sed -i 's|/usr/local/share/railbench|$(PREFIX)/share/railbench|' \
	    $(DESTDIR)$(PREFIX)/share/railbench/grafana/provisioning/dashboards/railbench.yml

# The OCI image railbench:<version> from the Debian package of HEAD on a Debian 12 root made by mmdebstrap
# (packaging/image/build.sh; docs/kubernetes.md). Needs root, podman, mmdebstrap and Debian's mirror.
image: deps
	$(Q)packaging/image/build.sh

# cJSON.h is included up front so that cppcheck knows cJSON_ArrayForEach (else: unknownMacro, file skipped).
lint: deps
	cppcheck --quiet --enable=warning,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -Iinclude \
	    --include=$(strip $(call rb_pkg,--variable=includedir,libcjson))/cjson/cJSON.h \
	    core loader block collectives fabric reports

clean:
	rm -rf build

-include $(OBJ:.o=.d) $(UNIT_BIN:=.d)
