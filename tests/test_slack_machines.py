"""Cloud machine types said by name in a slash command are read as their GPUs, count and cloud, and told back."""

from __future__ import annotations

from catalog.types import Catalog
from service.slack.intake import preset_words
from workers.slack.grammar import parse_command
from workers.slack.machines import machine_words


def _parse(text: str, shipped: Catalog) -> tuple[dict, tuple[str, ...], int, tuple[str, ...]]:
    said, told = machine_words(text, shipped.instances)
    command = parse_command(said, presets=preset_words(), gpus=[g.slug for g in shipped.gpus])
    return command.spec, told, command.gpu_count, command.gpus


def test_a_machine_said_by_name_is_its_gpus_count_and_cloud(shipped: Catalog) -> None:
    # "on a p3.8xlarge" was "unknown word 'p3.8xlarge'"; "on a g5.2xlarge", "unknown preset 'g5.2xlarge'"
    spec, told, _, _ = _parse("how long to train resnet50 on imagenet on a p3.8xlarge?", shipped)
    assert spec["constraints"]["gpus"] == ["v100-16gb"] and spec["constraints"]["providers"] == ["aws"]
    assert spec["constraints"]["max_gpus"] == 4
    assert told and told[0].startswith("p3.8xlarge: 4 x v100-16gb on aws")
    spec, told, _, _ = _parse("fine-tune llama 3 8b with lora on an a2-highgpu-1g", shipped)
    assert spec["constraints"]["gpus"] == ["a100-40gb"] and spec["constraints"]["providers"] == ["gcp"]


def test_a_fit_on_a_machine_said_by_name_fits_its_gpus(shipped: Catalog) -> None:
    _, told, count, gpus = _parse("does bert fit on a p4d.24xlarge", shipped)
    assert gpus == ("a100-40gb",) and count == 8 and told


def test_a_count_of_machines_said_by_name_is_their_gpus(shipped: Catalog) -> None:
    spec, _, _, _ = _parse("pretrain gpt2 on 10b tokens on 2 p4d.24xlarge", shipped)
    assert spec["constraints"]["max_gpus"] == 16 and spec["constraints"]["gpus"] == ["a100-40gb"]


def test_words_that_are_no_machine_are_left_as_said(shipped: Catalog) -> None:
    assert machine_words("resnet50 on a t4, 90 epochs", shipped.instances) == ("resnet50 on a t4, 90 epochs", ())


def test_a_cloud_the_catalog_lacks_is_said_back_and_ranked_on_aws_and_gcp(shipped: Catalog) -> None:
    # "... on runpod" was "unknown word 'runpod'"
    spec, told, _, _ = _parse("fine-tune llama 3 8b with qlora on 100k samples on runpod", shipped)
    assert told == ("runpod: not in gpugauge's catalog (AWS and Google Cloud), ranked on those",)
    assert spec["dataset"]["samples"] == 100_000 and "providers" not in spec.get("constraints", {})


def test_a_count_written_apart_from_its_x_is_joined(shipped: Catalog) -> None:
    # "on 2 x t4" was "unknown word '2'", "unknown word 'x'"; "512 x 512 images" the same
    assert machine_words("qlora on 2 x t4", shipped.instances)[0] == "qlora on 2x t4"
    assert machine_words("a unet on 2000 512 x 512 images", shipped.instances)[0] == "a unet on 2000 512x512 images"
    _, _, count, gpus = _parse("does mistral 7b qlora fit on 2 x t4", shipped)
    assert count == 2 and gpus == ("t4",)


def test_cards_said_as_nodes_are_machines_of_eight_and_a_regions_family_is_its_regions() -> None:
    # "on 2 h100 nodes" ('nodes'), "in us-east" and "on v100s" (the V100S, a card the catalog lacks) were refused
    from catalog.loader import load_catalog
    from tests.test_slack_phrases import parse

    nodes = parse(machine_words("fine-tune llama 3 70b on 2 h100 nodes", load_catalog().instances)[0])
    assert nodes.spec["constraints"]["max_gpus"] == 16 and "h100-sxm" in nodes.spec["constraints"]["gpus"]
    assert parse("fine-tune bert on 100k samples in us-east").spec["constraints"]["regions"] == ["us-east*"]
    assert "v100-16gb" in parse("train resnet50 on v100s").spec["constraints"]["gpus"]


def test_colab_is_a_fit_on_its_free_tiers_t4_or_on_the_card_said(shipped: Catalog) -> None:
    # "can i fine-tune llama 3 8b with qlora on colab" was ranked on AWS and Google Cloud machines, Colab said to be
    # "not in gpugauge's catalog": the question is whether it runs on Colab's GPU
    spec, told, count, gpus = _parse("can i fine-tune llama 3 8b with qlora on colab", shipped)
    assert gpus == ("t4",) and count == 1 and told[0].startswith("colab: a fit on the T4")
    spec, _, _, gpus = _parse("train resnet18 on cifar10 on google colab", shipped)
    assert gpus == ("t4",) and "providers" not in spec.get("constraints", {})  # "google" is no Google Cloud ranking
    _, told, _, gpus = _parse("fine-tune bert on colab with an a100", shipped)
    assert gpus and all(g.startswith("a100") for g in gpus) and told == ("colab: a fit on the card said",)
