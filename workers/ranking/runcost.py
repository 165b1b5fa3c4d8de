"""What a run on a rented machine really takes: start-up, data staging, checkpoints and billing; pure.

A run's wall-clock, from the request to the last step:
    provisioning (request to running) + boot (running to a shell) + environment (container pull,
    framework and CUDA start) + staging (the data set and a fine-tune's pre-trained weights copied to
    the machine) + training + checkpoints (each written at a stated interval)
Billing starts when the machine is running (AWS and Google bill from the running state), so the
provisioning wait is not billed; the rest is, per second with a 60 s minimum for Linux on both
clouds. Staging reads the data set at the smaller of the instance's network and the rate its
storage takes writes: local NVMe where the local disk holds the data, else network block storage.

Figures marked [documented estimate] are published or commonly documented orders of magnitude,
not measured by gpugauge; they are stated in every option so a reader can see what was assumed.
Owned machines start from a machine already running with the data on its disks: only the
environment start counts, and no billing minimum applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.types import Provider

SECONDS_PER_HOUR = 3600.0

# Billing: per second, 60 s minimum, Linux, on-demand and spot alike. AWS: aws.amazon.com/ec2/pricing
# ("per-second billing ... minimum of 60 seconds", Linux); Google: cloud.google.com/compute/vm-instance-pricing
# ("billed ... per second, with a 1-minute minimum"). Read 2026-12-01 from the pages' wording as recalled.
BILLING_GRANULARITY_S = {Provider.AWS: 1.0, Provider.GCP: 1.0}
BILLING_MINIMUM_S = {Provider.AWS: 60.0, Provider.GCP: 60.0}

# Provisioning, request to "running" [documented estimate]: EC2 on-demand instances reach running in
# 10-30 s and a shell within about a minute for current general-purpose types
# (martysweet.co.uk/ec2-launch-times, measured 2023-10); GPU capacity is often slower to place, so
# one minute is allowed for both clouds.
PROVISIONING_S = {Provider.AWS: 60.0, Provider.GCP: 60.0}
# Boot, running to a usable GPU [documented estimate]: about 90 s for a single-node GPU image; the
# NVSwitch machines (8 or 16 GPUs of an HGX board) start the fabric manager and EFA/GPUDirect drivers,
# commonly 4-6 min (AWS p4d/p5 user guides describe the fabric manager start; no published timing, 300 s
# assumed). A smaller shape of the same family (a2-ultragpu-1g, a3-highgpu-1g, p5.4xlarge) has no switch
# to start. Until 2026-12-03 this went by family alone: the 1- to 4-GPU shapes of a2-ultragpu and a3 paid
# the switch's 300 s and the 8-GPU p6-b200, a4-highgpu-8g and a2-highgpu-8g did not.
BOOT_S_DEFAULT = 90.0
NVSWITCH_BOOT_S = 300.0
NVSWITCH_FAMILIES = frozenset({
    "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200",
    "a2-highgpu", "a2-megagpu", "a2-ultragpu", "a3-highgpu", "a3-megagpu", "a3-ultragpu", "a3-edgegpu",
    "a4-highgpu",
})
NVSWITCH_MIN_GPUS = 8


def boot_seconds(family: str, gpu_count: int) -> float:
    """Return the boot of a machine of this family and GPU count: an NVSwitch board's is longer."""
    return NVSWITCH_BOOT_S if family in NVSWITCH_FAMILIES and gpu_count >= NVSWITCH_MIN_GPUS else BOOT_S_DEFAULT
# Environment start [documented estimate]: pulling a framework container (a PyTorch NGC image is
# about 10 GB compressed) and starting Python, CUDA and NCCL: three minutes.
ENVIRONMENT_S = 180.0
# Storage write rates while staging and checkpointing, MB/s (10**6 bytes):
# - AWS gp3 baseline throughput 125 MiB/s (docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html,
#   read 2024-11), 131 MB/s;
# - Google pd-balanced, about 240 MB/s per VM for the machine sizes GPUs attach to
#   (cloud.google.com/compute/docs/disks/performance) [documented estimate, recalled];
# - local NVMe: about 1,000 MB/s sequential writes for one drive [documented estimate].
BLOCK_WRITE_MB_PER_S = {Provider.AWS: 131.0, Provider.GCP: 240.0}
LOCAL_NVME_WRITE_MB_PER_S = 1000.0
# An hour between checkpoints when the spec names no interval and the run is not on spot
# [rule of thumb]: an interruption of an on-demand run loses at most an hour.
DEFAULT_CHECKPOINT_EVERY_HOURS = 1.0
# The Young/Daly interval is not taken below ten minutes [rule of thumb]: a checkpoint also pauses the
# training loop and the data loaders, which the formula's write time leaves out.
MIN_CHECKPOINT_EVERY_HOURS = 10 / 60


@dataclass(frozen=True, init=False)
class StartUp:
    """The seconds before the first training step, each part apart, and the staging rate used."""

    provisioning_s: float
    boot_s: float
    environment_s: float
    staging_s: float
    staging_mb_per_s: float

    def __init__(self, provisioning_s: float, boot_s: float, environment_s: float, staging_s: float,
                 staging_mb_per_s: float) -> None:
        # Written into the instance's dict: a frozen dataclass's own __init__ sets each field through
        # object.__setattr__, and a ranking starts a hundred machines per job.
        fields = self.__dict__
        fields["provisioning_s"], fields["boot_s"], fields["environment_s"] = provisioning_s, boot_s, environment_s
        fields["staging_s"], fields["staging_mb_per_s"] = staging_s, staging_mb_per_s

    @property
    def billed_s(self) -> float:
        """Return the part of start-up that is billed: everything after the machine is running."""
        return self.boot_s + self.environment_s + self.staging_s

    @property
    def total_s(self) -> float:
        """Return the whole wait before the first step."""
        return self.provisioning_s + self.billed_s


@dataclass(frozen=True)
class Checkpoints:
    """Checkpoints of one run: the interval, how many, and the seconds each takes to write."""

    every_hours: float
    count: int
    write_s: float

    @property
    def total_s(self) -> float:
        """Return the seconds all checkpoints add to the run."""
        return self.count * self.write_s


def storage_write_mb_per_s(provider: Provider, *, local_disk_holds_data: bool) -> float:
    """Return the rate data lands on the machine's storage: local NVMe, else the provider's block storage."""
    if local_disk_holds_data:
        return LOCAL_NVME_WRITE_MB_PER_S
    return BLOCK_WRITE_MB_PER_S.get(provider, min(BLOCK_WRITE_MB_PER_S.values()))


def start_up(provider: Provider, family: str, *, gpu_count: int, dataset_bytes: int, network_gbit_per_s: float,
             local_disk_holds_data: bool, cap_mb_per_s: float = 0.0, weights_bytes: int = 0) -> StartUp:
    """Return the start-up of a rented machine: provisioning, boot, environment, staging of the data and weights.

    `cap_mb_per_s` (> 0) caps the data set's staging rate where it comes from another region or cloud
    (transfer.py). `weights_bytes`: the pre-trained weights a fine-tune downloads first (checkpoint.pretrained_bytes:
    a 70B model's 141 GB, ten minutes at a Google balanced disk's 240 MB/s), at the machine's own rate (a model hub
    or the cloud's own bucket, not the data's region).
    """
    if provider is Provider.ONPREM:
        return StartUp(0.0, 0.0, ENVIRONMENT_S, 0.0, 0.0)
    storage = storage_write_mb_per_s(provider, local_disk_holds_data=local_disk_holds_data)
    network = network_gbit_per_s * 1000.0 / 8.0 if network_gbit_per_s > 0 else storage
    own = min(network, storage)
    rate = min(own, cap_mb_per_s) if cap_mb_per_s > 0 else own
    staging = (dataset_bytes / (rate * 1e6) if dataset_bytes > 0 else 0.0) + weights_bytes / (own * 1e6)
    return StartUp(PROVISIONING_S.get(provider, 60.0), boot_seconds(family, gpu_count),
                   ENVIRONMENT_S, staging, rate)


def checkpoints(training_hours: float, *, every_hours: float, write_s: float) -> Checkpoints:
    """Return the checkpoints a run of `training_hours` writes at `every_hours` (none at the very end)."""
    if training_hours <= 0 or every_hours <= 0:
        return Checkpoints(every_hours, 0, write_s)
    return Checkpoints(every_hours, max(0, math.ceil(training_hours / every_hours) - 1), write_s)


def billed_hours(provider: Provider, seconds: float) -> float:
    """Return the hours billed for `seconds` of running: rounded up to the granularity, at least the minimum."""
    granularity = BILLING_GRANULARITY_S.get(provider, 0.0)
    minimum = BILLING_MINIMUM_S.get(provider, 0.0)
    if granularity > 0:
        seconds = math.ceil(seconds / granularity - 1e-9) * granularity
    return max(seconds, minimum) / SECONDS_PER_HOUR
