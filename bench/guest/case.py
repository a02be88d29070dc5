"""One benchmark case, described once: bench.py writes it as JSON next to the
case's results (raw/NAME.case.json), the guest script reads it (--case), the
report reads its fields. Standard library only: runs on the host and in the
guest."""
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Optional

SCENARIOS = {"shared": "overlayfs, one shared lower",
             "distinct": "overlayfs, distinct lowers",
             "thin": "XFS on dm-thin snapshots"}


@dataclass
class Case:
    name: str
    kind: str                   # image | containers | density | fio | micro | tag |
    #                             pairs
    scenario: str = ""          # shared | distinct | thin ("" for micro, tag)
    verify: str = "off"         # off (pcdedup switched off) | full | trust |
    #                             default (switched on, the kernel's verify)
    min_size: Optional[int] = None   # sysfs min_size; None: the kernel's default
    kernel: str = "patched"     # patched | stock
    n: int = 0                  # containers (or fio readers) at most
    samples: list = field(default_factory=list)   # N at which to sample
    launcher: str = ""          # crun for containers; "" where none is used
    mem: str = "2G"             # guest memory
    cpus: int = 2
    accel: str = "auto"
    timeout: int = 900
    params: dict = field(default_factory=dict)    # kind-specific knobs
    order: int = 0              # place in the run (the report lists cases so)

    @property
    def dedup(self):
        return self.verify != "off"

    def label(self):
        """How the report names the case: scenario, pcdedup state, kernel."""
        parts = [SCENARIOS.get(self.scenario, self.kind)]
        if self.kernel == "stock":
            parts.append("stock kernel")
        elif not self.dedup:
            parts.append("pcdedup off")
        else:
            s = ("pcdedup on, defaults" if self.verify == "default"
                 else f"pcdedup on, verify={self.verify}")
            if self.min_size is not None:
                s += f", min_size={self.min_size}"
            parts.append(s)
        if self.params.get("hot_fraction"):
            parts.append(f"hot set {self.params['hot_fraction']:.0%} of the image")
        if self.params.get("tag_level"):
            parts.append(f"image tagged --tree-level {self.params['tag_level']}")
        if self.params.get("snap_options"):
            parts.append(f"snapshots mounted {self.params['snap_options']}")
        return ", ".join(parts)

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), indent=1)

    def save(self, path):
        with open(path, "w") as f:
            f.write(self.to_json() + "\n")

    @classmethod
    def load(cls, path):
        with open(path) as f:
            d = json.load(f)
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def memory_tight(sample):
    """Whether memory, not the host's CPU, can explain a slow pace: reclaim
    ran in the sample's window (LRU pages scanned by kswapd or directly,
    slab shrinkers), or free memory was below twice the zones' high
    watermarks (kswapd reclaims up to them once the page cache fills
    memory). Under TCG a guest that shares the host's cores with other work
    reads slower with memory to spare: that is no density limit. A sample
    without these fields counts as tight."""
    wm = sample.get("watermark_high_kb")
    if wm is None or sample.get("memfree_kb") is None:
        return True
    ev = sample.get("events") or {}
    reclaim = sum(ev.get(k) or 0 for k in ("pgscan_kswapd", "pgscan_direct", "slabs_scanned"))
    return reclaim > 0 or sample["memfree_kb"] < 2 * wm


def density_pass(sample, fit_fraction, min_pace=0.5):
    """A density sample passes when every container it started runs,
    nothing was OOM-killed, the file refaults in its window stayed at or
    below FIT_FRACTION of the bytes the containers read, and, while memory
    is tight (memory_tight), so did everything read from the disk (metadata
    too: inodes evicted and read again show in no refault counter), and the
    containers kept at least MIN_PACE of their pace (`pace`: the aggregate
    read rate over N hot sets per pass time; memory pressure stalls them on
    reclaim and on small synchronous metadata reads long before those reads
    add up to a share of the bytes). With memory to spare, neither is a
    density limit: a guest slowed by other work on the host's cores reads
    slower, and a new container's snapshot is read cold (its mount reads
    about 1 MiB of log and metadata, over 1% of a small hot set's reads). A
    container that did not start (`start_failed`: crun failed, or it was
    not ready within the start timeout) fails the sample. One rule: the
    guest stops on it, the report reads it."""
    frac, disk = sample.get("refault_fraction"), sample.get("disk_fraction", 0)
    pace = sample.get("pace")
    return (not sample.get("start_failed")
            and sample.get("alive") == sample["n"] and not sample["events"].get("oom_kill")
            and frac is not None and frac <= fit_fraction
            and (not memory_tight(sample)
                 or ((disk is None or disk <= fit_fraction)
                     and (pace is None or pace >= min_pace))))


def density_bracket(case, result):
    """(last pass, first fail, capped) of a density result: the largest N
    sampled before the first failing sample, the N of that sample (None
    when none failed) and why the ramp ended without a failure ("n": the
    case's N, "time": its time budget; None when a sample failed)."""
    fit = case.params.get("fit_fraction", 0.05)
    last, first_fail = 0, None
    for s in result.get("samples", []):
        if not density_pass(s, fit, case.params.get("min_pace", 0.5)):
            first_fail = s["n"]
            break
        last = s["n"]
    capped = None
    if first_fail is None:
        capped = result.get("capped") or ("n" if last >= case.n else None)
    return last, first_fail, capped


def add_case_argument(parser):
    parser.add_argument("--case", required=True, type=Case.load,
                        help="the case JSON written by bench.py")
    parser.add_argument("--out", required=True, help="result JSON file name")
