# gpusort -- PGXS build with CUDA kernels
#
#   make [PG_CONFIG=...] [NVCC=...] [CUDA_HOME=...] [GPU_ARCHS="sm_90 ..."] [PTX_ARCH=sm_75]
#   make install
#   make installcheck            # pg_regress against a running server
#   make unit-test kernel-test   # standalone test programs in test/
#
# Without nvcc the library is built CPU-only (every sort takes the CPU path).

EXTENSION = gpusort
MODULE_big = gpusort
DATA = gpusort--1.0.sql gpusort--1.0--1.1.sql gpusort--1.1--1.2.sql
PGFILEDESC = "gpusort - sorting on NVIDIA GPUs"

REGRESS = gpu_sort_basics gpu_sort_distributions gpu_sort_special_values gpusort_node gpusort_cost \
	gpusort_algorithms gpusort_plan_shapes gpusort_memory gpusort_key_types \
	gpusort_bounded gpusort_spill
REGRESS_OPTS = --load-extension=gpusort

SRC_OBJS = src/gpusort.o src/guc.o src/sort_engine.o src/array_sort.o \
	src/devices.o src/key_encoding.o src/cpu_radix.o src/sort_keys.o src/key_finish.o \
	src/tuple_store.o src/column_store.o src/big_alloc.o src/gpusort_planner.o src/gpusort_cost.o \
	src/plan_build.o src/relabeled_keys.o src/gpusort_node.o src/node_intake.o src/node_topk.o src/node_spill.o \
	src/node_explain.o src/parallel_fill.o src/fill_bound.o src/device_opener.o \
	src/collation_keys.o src/run_threads.o src/service_client.o src/service_worker.o

# ICU sort keys need ICU's headers (libicu-dev), which a server built with
# ICU includes from utils/pg_locale.h; without them such keys keep
# PostgreSQL's abbreviated key (src/collation_keys.c).  The symbols come from the
# server's own ICU libraries at load time.
ICU_HEADERS := $(shell printf '\043include <unicode/ucol.h>\n' | $(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo yes)
ifneq ($(ICU_HEADERS),yes)
src/collation_keys.o: override CPPFLAGS += -DGPUSORT_NO_ICU
endif

# PGXS would otherwise ask for LLVM bitcode of the nvcc objects
override with_llvm = no

PG_CONFIG ?= pg_config

# ---- CUDA ------------------------------------------------------------------
ifeq ($(origin NVCC),undefined)
  ifneq ($(CUDA_HOME),)
    NVCC := $(wildcard $(CUDA_HOME)/bin/nvcc)
  endif
  ifeq ($(NVCC),)
    NVCC := $(shell command -v nvcc 2>/dev/null)
  endif
endif
ifeq ($(CUDA_HOME),)
  ifneq ($(NVCC),)
    # resolve wrapper scripts: ask nvcc where its toolkit lives
    CUDA_HOME := $(shell $(NVCC) --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n "s/^\#\$$ TOP=//p" | head -1)
    ifeq ($(CUDA_HOME),)
      CUDA_HOME := $(abspath $(dir $(NVCC))/..)
    endif
  endif
endif

KERNEL_HEADERS = $(wildcard kernels/*.h kernels/*.cuh)

ifneq ($(NVCC),)
  # SASS for the GPUs of this machine where it has any (nvidia-smi), else for
  # a lean set (sm_80 SASS also runs on sm_86/sm_89); PTX for the oldest
  # architecture this nvcc builds, which the driver compiles for any other GPU
  NVCC_ARCHS := $(shell $(NVCC) --list-gpu-code 2>/dev/null | sort -t_ -k2 -n)
  LOCAL_ARCHS := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
	tr -d . | sed 's/^/sm_/' | sort -u)
  GPU_ARCHS ?= $(or $(filter $(NVCC_ARCHS),$(LOCAL_ARCHS)),$(filter $(NVCC_ARCHS),sm_80 sm_90 sm_100 sm_120))
  PTX_ARCH ?= $(firstword $(NVCC_ARCHS))
  GENCODE = $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a:sm_%=%),code=$(a)) \
	-gencode arch=compute_$(PTX_ARCH:sm_%=%),code=compute_$(PTX_ARCH:sm_%=%)
  NVCC_FLAGS = -O3 -std=c++17 $(GENCODE) -Xcompiler -fPIC,-Wall,-Wextra
  KERNEL_OBJS = kernels/device.o kernels/onesweep.o kernels/quicksort.o kernels/bitonic_sort.o kernels/sort_job.o
  CUDA_LIBS = -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/targets/x86_64-linux/lib \
	-lcudart_static -lrt -ldl -lpthread -lstdc++
else
  $(info gpusort: nvcc not found (set NVCC or CUDA_HOME); building a CPU-only library)
  KERNEL_OBJS = kernels/no_gpu.o
  CUDA_LIBS =
endif

OBJS = $(SRC_OBJS) $(KERNEL_OBJS)
SHLIB_LINK += $(CUDA_LIBS)
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare

TEST_PROGRAMS = test/unit_test test/kernel_test bench/crossover bench/sort_bench bench/radix_tune bench/cpu_radix_threads
EXTRA_CLEAN = $(TEST_PROGRAMS) kernels/*.o src/.pg-stamp

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

kernels/%.o: kernels/%.cu $(KERNEL_HEADERS)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@

$(SRC_OBJS): $(wildcard src/*.h) kernels/gpusort_kernels.h

# objects built against another PostgreSQL (another PG_CONFIG) are rebuilt:
# src/.pg-stamp names the server the objects were last built for
PG_STAMP_TEXT := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --includedir-server)
ifneq ($(PG_STAMP_TEXT),$(shell cat src/.pg-stamp 2>/dev/null))
  $(shell echo '$(PG_STAMP_TEXT)' >src/.pg-stamp)
endif
$(SRC_OBJS): src/.pg-stamp

# ---- standalone programs (no PostgreSQL needed) ------------------------------
TEST_CFLAGS = -O2 -g -Wall -Wextra -std=gnu11 -Isrc -Ikernels -Itest

test/unit_test: test/unit_test.c test/test_check.h test/test_data.h src/key_encoding.c src/cpu_radix.c src/run_threads.c src/key_encoding.h src/cpu_radix.h src/run_threads.h
	$(CC) $(TEST_CFLAGS) -o $@ test/unit_test.c src/key_encoding.c src/cpu_radix.c src/run_threads.c -lm -lpthread

test/kernel_test: test/kernel_test.c test/test_data.h test/test_check.h src/cpu_radix.c src/run_threads.c kernels/auto_config.h kernels/gpusort_test_hooks.h $(KERNEL_OBJS)
	$(CC) $(TEST_CFLAGS) -o $@ test/kernel_test.c src/cpu_radix.c src/run_threads.c $(KERNEL_OBJS) $(CUDA_LIBS) -lm -lpthread

bench/crossover: bench/crossover.c bench/bench_clock.h test/test_data.h src/cpu_radix.c src/run_threads.c $(KERNEL_OBJS)
	$(CC) $(TEST_CFLAGS) -o $@ bench/crossover.c src/cpu_radix.c src/run_threads.c $(KERNEL_OBJS) $(CUDA_LIBS) -lm -lpthread

bench/cpu_radix_threads: bench/cpu_radix_threads.c bench/bench_clock.h src/cpu_radix.c src/run_threads.c
	$(CC) $(TEST_CFLAGS) -o $@ bench/cpu_radix_threads.c src/cpu_radix.c src/run_threads.c -lpthread

# the GPU sorts beside CUB, Thrust and the CPU (needs nvcc; see bench/README.md)
bench/sort_bench: bench/sort_bench.cu bench/bench_clock.h bench/bench_data.cuh test/test_data.h src/cpu_radix.c src/run_threads.c $(KERNEL_HEADERS) $(KERNEL_OBJS)
	$(NVCC) $(NVCC_FLAGS) -Isrc -Ikernels -Itest -o $@ bench/sort_bench.cu src/cpu_radix.c src/run_threads.c \
		$(filter-out kernels/sort_job.o,$(KERNEL_OBJS))

bench/radix_tune: bench/radix_tune.cu bench/bench_data.cuh test/test_data.h $(KERNEL_HEADERS) $(KERNEL_OBJS)
	$(NVCC) $(NVCC_FLAGS) -Ikernels -Itest -o $@ bench/radix_tune.cu $(KERNEL_OBJS)

.PHONY: unit-test kernel-test
unit-test: test/unit_test
	test/unit_test

kernel-test: test/kernel_test
	test/kernel_test
