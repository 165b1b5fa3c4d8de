"""A published recipe named in a slash command is its settings, told back: nanoGPT's GPT-2 124M on OpenWebText."""

from __future__ import annotations

from catalog.gpus import load_gpus
from service.slack.intake import preset_words
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.slack.grammar import parse_command
from workers.slack.recipes import recipe_words


def _spec(text: str) -> dict[str, object]:
    said, told = recipe_words(text)
    assert len(told) == 1 and "config/train_gpt2.py" in told[0]
    return parse_command(said, presets=preset_words(), gpus=["a100-40gb", "h100-sxm"]).spec


def test_nanogpt_is_its_config_gpt2_124m_for_600k_iterations_of_480_sequences() -> None:
    # "train gpt2 like nanogpt" was "unknown word 'nanogpt'"
    for text in ("train gpt2 like nanogpt", "reproduce gpt-2 124m on openwebtext with nanogpt on 8 a100-40gb",
                 "nanoGPT's recipe on 8 h100-sxm"):
        spec = _spec(text)
        training = spec["training"]
        assert spec["model"] in ({"preset": "gpt2"}, {"preset": "gpt2-124m"})
        assert spec["dataset"] == {"samples": 600_000 * 12 * 40}  # max_iters x batch_size x gradient_accumulation
        assert (training["batch_size"], training["sequence_length"], training["update_interval"]) == (12, 1024, 5)
        assert training["from_pretrained"] is False and training["precision"] == "bf16-mixed"
    assert recipe_words("train gpt2 on openwebtext") == ("train gpt2 on openwebtext", ())
    assert _spec("train gpt2-medium like nanogpt")["model"] == {"preset": "gpt2-medium"}  # a model said wins


def test_nanogpts_8_a100_run_is_sized_near_its_readmes_4_days() -> None:
    # the README: "a single 8XA100 40GB node in about 4 days" with torch.compile; the core sizes eager PyTorch, so
    # it should read somewhat slower, not a different order
    _, job = load_job(_spec("train gpt2 like nanogpt"))
    row = estimate_on_gpus(job, load_gpus(), slugs=["a100-40gb"], gpu_count=8).per_gpu[0]
    days = row.training_hours / 24
    print(f"\nnanoGPT GPT-2 124M on 8 x A100 40GB: {days:.1f} days predicted (README: about 4 days, compiled)")
    assert row.fits and 3.0 < days < 7.0


def test_dreambooth_is_diffusers_readme_run_800_steps_of_an_instance_and_a_class_image() -> None:
    # "run sd 1.5 dreambooth on 20 images" was "unknown word 'dreambooth'"
    said, told = recipe_words("run sd 1.5 dreambooth on 20 images")
    assert "20" not in said and "train_dreambooth.py" in told[0]  # the steps set the work, not the images
    spec = parse_command(said, presets=preset_words(), gpus=["t4"]).spec
    assert spec["model"] == {"preset": "sd-1.5"} and spec["dataset"] == {"samples": 1600}
    assert (spec["training"]["batch_size"], spec["training"]["epochs"], spec["training"]["from_pretrained"]) == (
        2, 1, True)
    bare, _ = recipe_words("dreambooth with checkpointing and 8-bit adam")
    spec = parse_command(bare, presets=preset_words(), gpus=["t4"]).spec
    assert spec["model"] == {"preset": "stable-diffusion-1.5"}  # the README's model family, where none is said
    assert spec["training"]["optimizer"] == "adamw_8bit" and spec["training"]["recompute"] is True


def test_the_task_a_model_is_tuned_for_is_no_unknown_word() -> None:
    # "fine-tune t5-small for summarization on cnn dailymail" was "unknown word 'summarization'"
    for text, preset in (("fine-tune t5-small for summarization on cnn dailymail", "t5-small"),
                         ("fine-tune bert for ner on 14k sentences", "bert"),
                         ("fine-tune llama 3 8b as a chatbot on 10k conversations", "llama-3-8b")):
        assert parse_command(text, presets=preset_words(), gpus=["t4"]).spec["model"] == {"preset": preset}


def test_dreambooth_on_sdxl_is_readme_sdxls_lora_run_and_fits_the_a100_40gb_it_ran_on() -> None:
    # "dreambooth sdxl on 30 images" was sized as train_dreambooth.py's full U-Net fine-tune with prior preservation
    # (58 GiB, an H100 first); diffusers DreamBooth-tunes SDXL through LoRA only (README_sdxl.md, "Our experiments
    # were conducted on a single 40GB A100 GPU"), 500 steps of 1 image x 4 accumulation steps at 1,024 px
    said, told = recipe_words("dreambooth sdxl on 30 images")
    assert "30" not in said and "train_dreambooth_lora_sdxl.py" in told[0]
    spec = parse_command(said, presets=preset_words(), gpus=["a100-40gb", "t4"]).spec
    training = spec["training"]
    assert spec["model"] == {"preset": "sdxl"} and spec["dataset"] == {"samples": 2000}
    assert (training["batch_size"], training["update_interval"], training["epochs"]) == (1, 4, 1)
    assert training["parallelism"]["adapter"] == {"kind": "lora", "rank": 4, "targets": ["q", "k", "v", "o"]}
    _, job = load_job(spec)
    rows = {r.gpu: r for r in estimate_on_gpus(job, load_gpus(), slugs=["a100-40gb", "t4"]).per_gpu}
    print(f"\nDreamBooth LoRA SDXL: {rows['a100-40gb'].gpu_memory_bytes / 2**30:.1f} GiB, "
          f"{rows['a100-40gb'].training_hours * 60:.1f} min on an A100 40GB")
    assert rows["a100-40gb"].fits  # the README's own card
    for text in ("dreambooth stable diffusion xl with qlora", "sd-xl dreambooth lora rank=8"):
        said, _ = recipe_words(text)
        adapter = parse_command(said, presets=preset_words(), gpus=["t4"]).spec["training"]["parallelism"]["adapter"]
        assert adapter["kind"] in ("lora", "qlora")  # an adapter said is kept, never said twice
    assert recipe_words("sd 1.5 dreambooth")[1][0].startswith("dreambooth: diffusers' train_dreambooth.py")
