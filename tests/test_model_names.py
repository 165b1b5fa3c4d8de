"""Model names as people write them (Hugging Face repositories, words) resolve to presets."""

from __future__ import annotations

import pytest

from tests.test_slack_phrases import parse
from workers.sizing.errors import UnknownNameError
from workers.sizing.presets.names import match_preset_name, name_forms
from workers.sizing.presets.registry import find_preset, preset_stats, preset_word


@pytest.mark.parametrize(("written", "preset"), [
    ("meta-llama/Llama-2-7b-hf", "llama2-7b"),
    ("meta-llama/Llama-2-70b-chat-hf", "llama2-70b"),
    ("meta-llama/Meta-Llama-3-8B", "llama3-8b"),
    ("Meta-Llama-3.1-8B-Instruct", "llama3-8b"),
    ("Llama 3 8B", "llama3-8b"),
    ("mistralai/Mistral-7B-v0.1", "mistral-7b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
    ("google-bert/bert-base-uncased", "bert-base"),
    ("openai-community/gpt2", "gpt2"),
    ("google/vit-base-patch16-224", "vit-b16"),
    ("microsoft/resnet-50", "resnet50"),
    ("qwen2_5_7b", "qwen2.5-7b"),  # an alias written with underscores is still itself
    ("FacebookAI/roberta-large", "roberta-large"),
    ("yolov8n.pt", "yolov8n"),  # Ultralytics' model= names the weights file ("unknown preset 'yolov8n.pt'")
    ("yolov5s.yaml", "yolov5s"),
])
def test_a_model_named_as_its_repository_or_in_words_is_its_preset(written: str, preset: str) -> None:
    assert find_preset(written).name == preset


@pytest.mark.parametrize("written", ["deberta-v3-base", "nonsense/llama-9b", "llama-2-7b-extra", "pegasus-large"])
def test_a_name_that_is_no_preset_in_any_form_is_refused_with_suggestions(written: str) -> None:
    assert preset_word(written) is None
    with pytest.raises(UnknownNameError) as caught:
        find_preset(written)
    assert caught.value.field == "model.preset"


def test_only_suffixes_that_keep_the_shape_are_dropped() -> None:
    forms = name_forms("meta-llama/Llama-2-7b-chat-hf")
    assert forms[-2:] == ["llama-2-7b", "llama2-7b"]
    assert match_preset_name("gpt2-medium", {"gpt2"}) is None  # a size is never dropped
    assert match_preset_name("bert-base", {"bert"}) is None


def test_llama2_7b_has_llama_7bs_shape_at_its_own_context() -> None:
    two, one = find_preset("llama2-7b"), find_preset("llama-7b")
    assert (two.sequence_length, one.sequence_length) == (4096, 2048)
    assert preset_stats("llama2-7b").parameters == preset_stats("llama-7b").parameters == 6_738_415_616


def test_roberta_is_berts_encoder_with_its_own_embeddings_and_the_published_count_plus_the_head() -> None:
    for size, published, head in (("base", 124_645_632, 768 * 2 + 2), ("large", 355_359_744, 1024 * 2 + 2)):
        # RobertaModel's count includes a pooler the classification model replaces by a dense of the same
        # shape; the 2-class output projection comes on top
        assert preset_stats(f"roberta-{size}").parameters == published + head


def test_distilbert_counts_the_published_model_plus_its_classification_head() -> None:
    # DistilBertModel has no pooler: the pre_classifier dense and the 2-class classifier come on top
    assert preset_stats("distilbert/distilbert-base-uncased").parameters == 66_362_880 + (768 * 768 + 768) + 1_538


@pytest.mark.parametrize(("text", "preset"), [
    ("fine-tune google/vit-base-patch16-224 on 50k images", "vit-base-patch16-224"),
    ("fine-tune meta-llama/Llama-2-7b-hf on 5k samples", "llama-2-7b"),
    ("fine-tune vit large on imagenet", "vit-large"),
])
def test_a_fine_tune_said_before_an_owners_model_name_is_read(text: str, preset: str) -> None:
    # "fine-tune google/vit-..." joined into one name whose "owner" was "fine-tune-google": the fine-tune was lost
    # (no from_pretrained, one epoch); "vit large" was "unknown preset 'large'; did you mean t5-large?"
    command = parse(text)
    assert command.spec["model"] == {"preset": preset} and command.spec["training"]["from_pretrained"] is True
