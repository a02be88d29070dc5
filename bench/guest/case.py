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
    kind: str                   # image | containers | density | fio | micro | tag
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


def add_case_argument(parser):
    parser.add_argument("--case", required=True, type=Case.load,
                        help="the case JSON written by bench.py")
    parser.add_argument("--out", required=True, help="result JSON file name")
