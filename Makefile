# pcdedup: the front door. `make test` runs every test, `make bench` the
# benchmarks. See README.md.

KERNEL_IMAGE = build/kernel-patched/arch/x86/boot/bzImage

.PHONY: all deps tree kernel kernel-stock kernel-security kernel-debug export-patches \
	patches-check checkpatch shell tool test-progs test-images test test-debug series-check \
	clean

all: kernel tool

deps:
	@scripts/deps.sh

tree: deps
	@scripts/tree.sh

kernel: tree
	@scripts/kernel-build.sh patched

kernel-stock: tree
	@scripts/kernel-build.sh stock

# The security series alone: the A/B benchmark's middle arm.
kernel-security: tree
	@scripts/kernel-build.sh security

kernel-debug: tree
	@scripts/kernel-build.sh debug

export-patches:
	@scripts/export-patches.sh

patches-check:
	@scripts/patches-check.sh

checkpatch: tree
	@scripts/checkpatch.sh

tool: deps
	@$(MAKE) -s -C dedup all

test-progs: deps
	@$(MAKE) -s -C tests/dedup all

shell: kernel
	@vm/run --interactive

# The tests' small pair of real images (tests/bench/images.sh): Debian
# minbase, built once from the archive by bench/images.py and cached.
test-images: deps
	@bench/images.py --set test

test: kernel kernel-stock tool test-progs test-images
	@tests/run --kernel $(KERNEL_IMAGE)

test-debug: kernel-debug tool test-progs
	@tests/run --kernel build/kernel-debug/arch/x86/boot/bzImage --timeout-scale 4

# The differential fuzzer (tests/dedup/fuzz.sh) with fresh seeds for SECONDS
# (default 600) on KERNEL (default the patched kernel, built first), e.g.
# KERNEL=build/kernel-debug/arch/x86/boot/bzImage; it prints every failing
# seed (log in build/runs/fuzz/); SEED=N replays seed N alone (the seeds
# of a run are in its log and in make test's).
.PHONY: fuzz
fuzz: $(if $(KERNEL),,kernel) tool test-progs
	@vm/run --kernel $(or $(KERNEL),$(KERNEL_IMAGE)) $$(sed -n 's/^# vm: *//p' tests/dedup/fuzz.sh) \
		--timeout $$(( $(or $(SECONDS),600) + 600 )) --out build/runs/fuzz \
		$(if $(SEED),--env PCDEDUP_FUZZ_SEEDS=$(SEED),--env PCDEDUP_FUZZ_SECONDS=$(or $(SECONDS),600)) \
		-- tests/dedup/fuzz.sh

# Every prefix of patches/series built and booted with the smoke suite
# (about 2 minutes a prefix, not run by CI); FROM=N TO=N for a sub-range.
series-check: deps
	@scripts/series-check.sh $(if $(FROM),--from $(FROM)) $(if $(TO),--to $(TO))

clean:
	rm -rf build/kernel-* build/config-* build/runs build/series-check
	$(MAKE) -s -C dedup clean

# Benchmarks (bench/, see bench/README.md): QUICK=1 for the short matrix
# (one image pair, density up to N=32, fio, one A/B round); SET=images for
# the version pairs of real images alone (bench/images.py builds them).
.PHONY: bench
bench: kernel kernel-stock kernel-security tool
	@bench/bench.py $(if $(QUICK),--quick) $(if $(SET),--set $(SET))
