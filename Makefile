# railbench — build, test, demo. `make V=1` shows full commands.

PREFIX ?= /usr/local
DESTDIR ?=
CC := mpicc
PKGS := libcurl libcjson libmicrohttpd hwloc
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

CFLAGS ?= -O2 -g
SANFLAGS ?=
RB_CFLAGS = -std=c11 -Wall -Wextra -Wshadow -Iinclude -MMD -MP \
            $(shell pkg-config --cflags $(PKGS)) $(CFLAGS) $(SANFLAGS)
LDLIBS := $(shell pkg-config --libs $(PKGS)) -lpthread -lm
TEST_LDLIBS := $(shell pkg-config --libs cmocka) $(LDLIBS)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

ifeq ($(V),1)
Q :=
else
Q := @
endif

# SUFFIX selects the build flavour: "" normal, "asan" for make check.
B := build$(if $(SUFFIX),/$(SUFFIX))
SRC := $(wildcard core/*.c loader/*.c block/*.c collectives/*.c fabric/*.c reports/*.c)
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

.PHONY: all test unit check fuzz fuzzers demo demo-cluster bench install lint clean deps FORCE

all: $(B)/railbench

deps:
	$(Q)scripts/deps.sh

$(B)/railbench: $(OBJ)
	@echo "  LINK    $@"
	$(Q)$(CC) $(RB_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(RB_CFLAGS) -c -o $@ $<

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
	$(Q)$(CC) $(RB_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(RB_CFLAGS) -Iloader -Icollectives -Ifabric -Ireports $(LDFLAGS) -DRB_FIXTURES_DIR='"$(CURDIR)/tests/fixtures"' -o $@ $< $(LIBOBJ) $(TEST_LDLIBS)

build/bench/%: tests/bench/%.c $(filter-out build/obj/core/main.o,$(SRC:%.c=build/obj/%.o))
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(RB_CFLAGS) -O2 -o $@ $< $(filter-out build/obj/core/main.o,$(SRC:%.c=build/obj/%.o)) $(LDLIBS)

unit: $(UNIT_BIN)
	$(Q)scripts/run-tests.sh unit $(UNIT_BIN)

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BIN) $(MPI_TEST_BIN)
	$(Q)OMPI_CC=clang $(MAKE) --no-print-directory SUFFIX=fuzz CFLAGS="-O1 -g" \
	    SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" fuzzers
	$(Q)scripts/run-tests.sh all $(UNIT_BIN) $(FUZZ_BIN)

check:
	$(Q)$(MAKE) --no-print-directory SUFFIX=asan CFLAGS="-O1 -g" SANFLAGS="$(SAN)" LDFLAGS="$(SAN)" unit

# libFuzzer targets (clang): the library built with fuzzer instrumentation plus ASan/UBSan, each target
# run for FUZZ_SECONDS from its seed corpus in tests/fuzz/corpus/.
fuzz:
	$(Q)OMPI_CC=clang $(MAKE) --no-print-directory SUFFIX=fuzz CFLAGS="-O1 -g" \
	    SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" fuzzers
	$(Q)scripts/run-tests.sh fuzz $(FUZZ_BIN)

fuzzers: $(FUZZ_BIN)

build/fuzz/fuzzers/%: tests/fuzz/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $<"
	$(Q)$(CC) $(RB_CFLAGS) -Iloader -fsanitize=fuzzer -o $@ $< $(LIBOBJ) $(LDLIBS)

demo: deps all
	$(Q)scripts/demo.sh

demo-cluster: deps all
	$(Q)scripts/demo-cluster.sh

bench: all $(BENCH_BIN)
	$(Q)scripts/run-bench.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/railbench
	install -m 0755 build/railbench $(DESTDIR)$(PREFIX)/bin/railbench
	if [ -d reports/grafana ]; then cp -r reports/grafana $(DESTDIR)$(PREFIX)/share/railbench/; fi

# cJSON.h is included up front so that cppcheck knows cJSON_ArrayForEach (else: unknownMacro, file skipped).
lint:
	cppcheck --quiet --enable=warning,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -Iinclude \
	    --include=$(shell pkg-config --variable=includedir libcjson)/cjson/cJSON.h \
	    core loader block collectives fabric reports

clean:
	rm -rf build

-include $(OBJ:.o=.d) $(UNIT_BIN:=.d)
