/*
 * The shared library whose pcd_target() tests/dedup/uprobe.sh probes, built
 * as bin/libuprobe_target.so.
 */
int pcd_target(int x);

__attribute__((noinline, visibility("default"))) int pcd_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return 3 * x + 1;
}
