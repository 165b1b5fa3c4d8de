"""When a photograph model's job gives no loader cost: the answer a JPEG loader would give (`jpeg-loader-ranks`).

`dataset.preprocess_ms_per_sample` defaults to 0, so the ranking counts no host CPU for the loader and a
machine with a fast GPU and two or four vCPUs can come first (ResNet-50 on ImageNet: a T4 on 2 vCPUs;
AlexNet: an L40S on 4 vCPUs at 8,000 images/s). The requirements already say what a JPEG pipeline would
need (`image-preprocess-not-given`, sizing/image_input.py); this ranks the job once more with the measured
IMAGE_PIPELINE_MS an image (Ultralytics' mosaic loader's MOSAIC_PIPELINE_MS a sample for YOLO) and, when that
changes the first option, names it with its time and cost, and
what the first option here would take under that loader. The ranked options stay those of the job as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from workers.ranking.recommendation import RankedOption, Recommendation
from workers.ranking.run_words import hours_text, usd_text
from workers.sizing.image_input import assumed_loader, image_input
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec

# The re-ranking keeps this many options, so that the first option here is found among them and its time under
# the loader told (brief options: no words, so a longer list is cheap).
RANKED_FOR_THE_FIRST = 1000


def _machine(option: RankedOption) -> tuple[str, str, str, str, int]:
    return option.provider, option.instance_type, option.region, option.pricing.value, option.nodes


def _text(option: RankedOption) -> str:
    machines = f"{option.nodes} x {option.instance_type}" if option.nodes > 1 else option.instance_type
    return (f"{machines} ({option.provider} {option.region}, {option.pricing.value}; "
            f"{option.gpu_count * option.nodes}x {option.gpu}, {option.vcpus * option.nodes} vCPUs): "
            f"{hours_text(option.training_hours)} for {usd_text(option.training_cost_usd)}")


def jpeg_loader_warning(job: JobSpec, rec: Recommendation,
                        rank: Callable[[JobSpec], Recommendation]) -> CodedWarning | None:
    """Return `jpeg-loader-ranks` where a JPEG loader's CPU cost would change the first option.

    Only for models that read photographs (image_input: 96 px or more a side) whose job gives no
    `preprocess_ms_per_sample`. `rank` ranks a job as the recommendation did, without this check.
    """
    if not rec.options or job.dataset.preprocess_ms_per_sample > 0 or image_input(job.model) is None:
        return None
    top, loader = rec.options[0], assumed_loader(job.model)
    decoded = replace(job, dataset=replace(job.dataset, preprocess_ms_per_sample=loader.ms))
    found = rank(replace(decoded, limit=RANKED_FOR_THE_FIRST))
    if not found.options or _machine(found.options[0]) == _machine(top):
        return None
    same = next((o for o in found.options if _machine(o) == _machine(top)), None)
    here = (f"; under that loader the first option here would take {hours_text(same.training_hours)} for "
            f"{usd_text(same.training_cost_usd)}" if same is not None else "")
    return CodedWarning("jpeg-loader-ranks", (
        f"These options count no host CPU for reading the images (dataset.preprocess_ms_per_sample is not "
        f"given). If they are {loader.words}, at {loader.ms} ms {'an' if loader.unit == 'image' else 'a'} "
        f"{loader.unit} on a reference core "
        f"({loader.source}), the first option becomes "
        f"{_text(found.options[0])}{here}. Give dataset.preprocess_ms_per_sample (gpugauge probe --sample times "
        f"your loader) to rank on your own loader's figure; 0 stays right for pre-decoded images or GPU decoding."))
