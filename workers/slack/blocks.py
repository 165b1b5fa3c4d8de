"""Slack messages (Block Kit, validated by slack_sdk's models) for answers, fits, help and errors.

Every message is a dict `{"text": fallback, "blocks": [...]}`: the text is what notifications and
screen readers show; the blocks are built from slack_sdk.models.blocks, whose `to_dict()` raises
on anything over Slack's limits. Inputs are the contract's JSON (a recommendation result, a
requirements object), not the core's dataclasses, so a message can be rendered from a stored job.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Mapping, Sequence
from dataclasses import fields
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from catalog.freshness import prices_dated_words
from catalog.gpu_names import model_word
from workers.ranking.recommendation import StrategyChoice
from workers.ranking.strategy_words import strategy_text
from workers.render import fmt_bytes, fmt_hours, fmt_rate, fmt_usd
from workers.sizing.requirements import Mitigation
from workers.slack import grammar
from workers.slack.buying import purchase_lines
from workers.slack.defaults import DEFAULT_PRECISION
from workers.slack.wording import slack_words

# Slack's documented limits (docs.slack.dev/reference/block-kit/blocks): 50 blocks a message,
# 3000 characters of section text, 2000 per section field, 150 for a header.
MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_FIELD_CHARS = 2000
MAX_HEADER_CHARS = 150
TOP_OPTIONS = 5
MAX_REJECTED_LINES = 8
# Recommendation warnings that say what to change when no option is left (ranking/relax.py).
NOTHING_FITS_ANSWERS = ("constraints-conflict", "gpus-exclude-all", "fused-loss-opens")
Message = dict[str, Any]

def escape_text(text: str) -> str:
    """Escape &, < and > as Slack asks (docs.slack.dev/messaging/formatting-message-text, "Escaping text").

    Slack sends a command's text with these three escaped; whatever of it is echoed back must stay so, or
    `<!channel>` becomes a live mention and `<https://x|y>` a disguised link. Escapes already there stay.
    """
    return html.escape(html.unescape(text), quote=False)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _section(text: str, *, fields: Sequence[str] = ()) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=_clip(text, MAX_SECTION_CHARS)),
                        fields=[MarkdownTextObject(text=_clip(f, MAX_FIELD_CHARS)) for f in fields] or None)


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=PlainTextObject(text=_clip(text, MAX_HEADER_CHARS)))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=_clip(text, MAX_SECTION_CHARS))])


def _bullets(lines: Sequence[str], *, title: str, most: int | None = None) -> SectionBlock:
    """Return one section of bullet lines, cut with "…and N more" to stay within the text limit."""
    text = f"*{title}*"
    for shown, line in enumerate(lines):
        more = f"\n…and {len(lines) - shown} more"
        if len(text) + len(line) + 3 + len(more) > MAX_SECTION_CHARS or shown == most:
            text += more
            break
        text += f"\n• {line}"
    return _section(text)


def message(text: str, blocks: Sequence[Block]) -> Message:
    """Return a validated message: the fallback text and at most 50 blocks as dicts."""
    if len(blocks) > MAX_BLOCKS:
        left_out = len(blocks) - MAX_BLOCKS + 1
        blocks = [*blocks[: MAX_BLOCKS - 1], _context(f"…{left_out} more blocks left out")]
    return {"text": _clip(text, MAX_SECTION_CHARS), "blocks": [b.to_dict() for b in blocks]}


def memory_lines(requirements: Mapping[str, Any]) -> str:
    """Describe the GPU memory a job needs and the term that dominates it."""
    total = int(requirements.get("gpu_memory_bytes", 0))
    breakdown: Mapping[str, int] = requirements.get("gpu_memory_breakdown") or {}
    text = f"*GPU memory:* {fmt_bytes(total)} per GPU"
    if breakdown and total > 0:
        term, size = max(breakdown.items(), key=lambda kv: kv[1])
        text += f", mostly {term.replace('_', ' ')} ({fmt_bytes(size)}, {size / total:.0%})"
    if baseline := requirements.get("baseline_formula_bytes"):  # "366 GiB" beside a LoRA's 20 GiB: say what it counts
        counts = " (fp32, every weight trained, every activation kept)" if baseline > 2 * total else ""
        text += f"; the plain formula{counts} gives {fmt_bytes(baseline)}"
    storage = requirements.get("storage_bytes") or {}
    if requirements.get("host_memory_bytes"):
        text += f"\n*Host memory:* {fmt_bytes(requirements['host_memory_bytes'])}"
    if storage.get("max"):
        text += f"  *Storage:* {fmt_bytes(storage['min'])} to {fmt_bytes(storage['max'])}"
    return text


def top_step_line(requirements: Mapping[str, Any], top: Mapping[str, Any]) -> str:
    """Return the top option's own step where it runs another strategy than the job as given ("" if not).

    The requirements' memory is the job as given (batch per GPU, plain data parallel); an option that
    shards, accumulates or trains adapters needs its own figure, which the user acts on. The words are
    the CLI's (strategy_words.strategy_text), read back from the option's JSON.
    """
    p = top.get("parallelism") or {}
    own = int(p.get("gpu_memory_per_gpu_bytes") or 0)
    if not own or own == int(requirements.get("gpu_memory_bytes") or 0):
        return ""
    choice = StrategyChoice(**{f.name: p[f.name] for f in fields(StrategyChoice)})
    words = strategy_text(choice, nodes=int(top.get("nodes") or 1))
    return f"*The top option's step:* {fmt_bytes(own)} per GPU ({words})"


def _warning_lines(warnings: Sequence[Mapping[str, Any]]) -> list[str]:
    return [f"{slack_words(str(w.get('message', '')))} (`{w.get('code', '')}`)" for w in warnings]


def _plan_lines(plan: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = []
    # the plan's "combined" row (every same-card change together) is there only where no single row fits the card:
    # said first, since a long language-model plan is cut to the section's limit
    for step in sorted(plan, key=lambda s: s.get("kind") != "combined"):
        settings = [f"{label} {step[key]:g}" for key, label in
                    (("batch_size", "batch"), ("learning_rate", "lr"), ("update_interval", "accum"),
                     ("gpu_count", "GPUs")) if step.get(key) is not None]
        line = f"*{step.get('kind', '')}*"
        if settings:
            line += f" ({', '.join(settings)})"
        line += f": {fmt_bytes(step.get('gpu_memory_bytes', 0))} per GPU"
        if step.get("time_factor", 1.0) != 1.0:
            line += f", time ×{step['time_factor']:.2f}"
        if step.get("description"):
            line += f". {step['description']}"
        lines.append(line + (f" First it opens: {step['opens'][0]}." if step.get("opens") else ""))
    return lines


def _shared_warnings(options: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return the option warnings every one of several options shown carries word for word ("dataset.samples is not
    given, so ... budget and deadline cannot be worked out" under each of five options): said once, not five times."""
    if len(options) < 2:
        return []
    first = list(options[0].get("warnings") or ())
    return [w for w in first if all(w in (o.get("warnings") or ()) for o in options[1:])]


def _option_block(option: Mapping[str, Any], *, shared: Sequence[Mapping[str, Any]] = ()) -> SectionBlock:
    pricing = str(option.get("pricing", "")).replace("_", "-")
    place = " · ".join(p for p in (option.get("region"), pricing) if p)
    star = " ★" if option.get("pareto") else ""
    nodes = int(option.get("nodes") or 1)  # gpu_count and the price are one machine's (CONTRACT.md)
    machines = f"{nodes} × " if nodes > 1 else ""
    text = f"*{option['rank']}. {option['provider']} {machines}{option['instance_type']}*{star}  {place}"
    if option.get("why"):
        text += f"\n_{option['why']}_"
    for w in option.get("warnings") or ():
        text += "" if w in shared else f"\n:warning: {w.get('message', '')}"
    fields = [
        f"*GPUs*\n{nodes * option['gpu_count']} × {option['gpu']} ({fmt_bytes(option.get('gpu_memory_bytes', 0))})"
        + (f"\non {nodes} machines" if nodes > 1 else ""),
        f"*Price per hour*\n{fmt_usd(nodes * option['price_per_hour_usd'])}"
        + (f" ({nodes} × {fmt_usd(option['price_per_hour_usd'])})" if nodes > 1 else "") + _price_date(option),
        f"*Hours*\n{_hours(option)}",
        f"*Total cost*\n{fmt_usd(option['training_cost_usd']) if option['training_hours'] > 0 else 'n/a'}",
    ]
    if option.get("co2e_kg") is not None:
        fields.append(f"*Energy, CO2e*\n{option.get('energy_kwh', 0.0):,.1f} kWh, {option['co2e_kg']:,.1f} kg")
    return _section(text, fields=fields)


def _price_date(option: Mapping[str, Any]) -> str:
    # The day the price was true, where its source says one (options[].price_as_of); a result from before the
    # field (no price_source) says nothing rather than "undated".
    if option.get("price_as_of"):
        return f", as of {option['price_as_of']}"
    if option.get("pricing") == "owned":  # power at the team's electricity rate: no market, no date
        return ", power at your electricity rate"
    return ", undated" if option.get("price_source") else ""


def _hours(option: Mapping[str, Any]) -> str:
    # No dataset size, no iteration count: the time (and so the total) is unknown, not zero.
    return fmt_hours(option["training_hours"]) if option["training_hours"] > 0 else "n/a: add samples="


def _best(option: Mapping[str, Any]) -> str:
    nodes = int(option.get("nodes") or 1)
    machine = (f"{option['provider']} {f'{nodes} × ' if nodes > 1 else ''}{option['instance_type']} "
               f"({nodes * option['gpu_count']}× {option['gpu']})")
    if option["training_hours"] > 0:
        return f"{machine}, {fmt_hours(option['training_hours'])}, {fmt_usd(option['training_cost_usd'])}"
    return f"{machine}, {fmt_usd(option['price_per_hour_usd'])} per hour"


def each_model_first(options: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return the options with the first of each GPU model ahead of the rest, each part in rank order: "compare a100
    vs h100 for ..." ranked five H100 machines first and showed no A100."""
    first: dict[str, int] = {}
    for at, option in enumerate(options):
        first.setdefault(model_word(str(option.get("gpu", ""))), at)
    lead = sorted(first.values())
    return [*(options[at] for at in lead), *(o for at, o in enumerate(options) if at not in first.values())]


def render_recommendation(result: Mapping[str, Any], *, title: str, top: int = TOP_OPTIONS,
                          purchase: bool = False, compare: bool = False,
                          per_year: tuple[int, str] | None = None) -> Message:
    """Render a recommendation result: the top options, the memory, warnings, or the out-of-memory plan; with
    `purchase` (the command named on-prem: "what should we buy"), the cards to buy in the result's order (those that
    pay off soonest against renting first; with nothing rented, the least a run costs over the cards' life), and the
    least to spend where it is not among them; `per_year` (buying.runs_per_year), their break-even in years at the
    frequency said. `compare`: the best option of each GPU model first."""
    requirements = result.get("requirements") or {}
    options: Sequence[Mapping[str, Any]] = result.get("options") or []
    options = each_model_first(options) if compare else options  # `compare`: several GPU models named
    buy = list(result.get("purchase") or []) if purchase else []  # purchase_lines picks the lines shown
    memory = memory_lines(requirements)
    own = top_step_line(requirements, options[0]) if options else ""
    if own:  # the requirements' figure is the job as given; the top option's own step follows it
        memory = memory.replace(" per GPU", " per GPU as given", 1) + "\n" + own
    blocks: list[Block] = [_header(f"gpugauge · {title}"), _section(memory), DividerBlock()]
    shared = _shared_warnings(options[:top])
    if options:
        blocks += [_option_block(o, shared=shared) for o in options[:top]]
        fallback = f"{title}: best is {_best(options[0])}"
        if len(options) > top:
            blocks.append(_context(f"…and {len(options) - top} more options"))
        # the job as given fits no card and the options change how it runs; adapters change what trains, so the
        # ranking leaves them to the user: the plan's adapter step that opens options is said beside them
        if plan := [step for step in result.get("plan") or () if step.get("opens") and step.get("kind") == "adapters"]:
            blocks.append(_bullets(_plan_lines(plan), title="Adapters fit too"))
    if buy:
        rented = buy[0].get("rental_cost_usd")  # every row is held against the same rental, said once
        against = f" against renting {buy[0].get('rental')}, {fmt_usd(float(rented))} a run" if rented else ""
        blocks.append(_bullets(purchase_lines(buy, per_year=per_year), title=f"Cards to buy{against}"))
        fallback = fallback if options else f"{title}: first to buy is {buy[0].get('instance_type', '?')}"
    elif not options:
        # Where the limits, the GPUs named or the loss the user set rule every option out, what to change is the
        # answer: said first. With no plan the job fits memory; the limits, or a card no cloud rents, leave no option
        relax = [w for w in requirements.get("warnings") or () if w.get("code") in NOTHING_FITS_ANSWERS]
        plan = result.get("plan") or requirements.get("mitigations") or []
        # a budget, deadline or CO2e cap no option meets: options fit (with the plan's changes), none within the limits
        fits = plan and not any(w.get("code") == "constraints-conflict" for w in relax)
        fallback = f"{title}: {'nothing fits' if fits else 'no option'} within the constraints"
        blocks.append(_section(f":no_entry: *{'Nothing fits' if fits else 'No option'}* within the constraints."
                               + "".join(f"\n{slack_words(escape_text(str(w.get('message', ''))))}" for w in relax)))
        if plan:
            blocks.append(_bullets(_plan_lines(plan), title="Out-of-memory plan"))
        rejected = [f"{r.get('instance_type', '')}: {r.get('reason', '')}"
                    for r in result.get("rejected") or ()]
        if rejected:
            blocks.append(_bullets(rejected, title="Why not", most=MAX_REJECTED_LINES))
    shown = [w for w in requirements.get("warnings") or ()
             if options or w.get("code") not in NOTHING_FITS_ANSWERS]
    shown += [{**w, "message": f"every option shown: {w.get('message', '')}"} for w in shared]
    if shown:
        blocks.append(_bullets(_warning_lines(shown), title="Warnings"))
    catalog = result.get("catalog") or {}
    if catalog:
        legend = " · ★ on the cost/time Pareto front" if any(o.get("pareto") for o in options[:top]) else ""
        blocks.append(_context(f"catalog {catalog.get('version', '?')}, "
                               f"{prices_dated_words(str(catalog.get('prices_as_of', '?')))}{legend}"))
    return message(fallback, blocks)


def fix_words(fix: Mitigation) -> str:
    """Return a fit answer's words for the change of the plan that makes a card hold the job."""
    return (f"fits with {fix.kind.value} ({fmt_bytes(fix.gpu_memory_bytes)} per GPU, time ×{fix.time_factor:.2f}; "
            "the plan below)")


def _fit_block(entry: Mapping[str, Any], fix: str = "", largest: int | None = None) -> SectionBlock:
    fits = bool(entry.get("fits"))
    mark = ":white_check_mark: fits" if fits else ":x: does not fit" + (" as given" if fix else "")
    most = f"; the largest batch that fits is {largest:,} per GPU, all else as given" if largest else ""
    text = (f"*{entry.get('gpu_count', 1)} × {entry['gpu']}*: {mark}, "
            f"{fmt_bytes(entry.get('gpu_memory_bytes', 0))} per GPU" + (f"; {fix}" if fix else "") + most)
    hours = entry.get("training_hours") or 0.0
    fields = [f"*Per iteration*\n{entry.get('iteration_ms', 0.0):,.1f} ms",
              f"*Throughput*\n{fmt_rate(entry.get('throughput_samples_per_s', 0.0))} samples/s",
              f"*Training time*\n{fmt_hours(hours) if hours > 0 else 'add samples= to know'}"]
    if entry.get("bottleneck"):
        fields.append(f"*Bound by*\n{entry['bottleneck']}")
    return _section(text, fields=fields)


def render_fit(requirements: Mapping[str, Any], *, title: str, fixes: Mapping[str, str] | None = None,
               largest: Mapping[str, int] | None = None) -> Message:
    """Render whether a job fits the asked GPUs and how long an iteration takes on each; `fixes`: for a card the job
    as given does not fit, the change of its plan that fits it, in words; `largest`: each card's largest batch."""
    per_gpu: Sequence[Mapping[str, Any]] = requirements.get("per_gpu") or []
    fixes, largest = fixes or {}, largest or {}
    blocks: list[Block] = [_header(f"gpugauge fit · {title}"), _section(memory_lines(requirements))]
    blocks += [_fit_block(e, fixes.get(e["gpu"], ""), largest.get(e["gpu"])) for e in per_gpu]
    if any(not e.get("fits") for e in per_gpu) and requirements.get("mitigations"):
        blocks.append(_bullets(_plan_lines(requirements["mitigations"]), title="Out-of-memory plan"))
    if requirements.get("warnings"):
        blocks.append(_bullets(_warning_lines(requirements["warnings"]), title="Warnings"))
    said = {True: "fits", False: "does not fit"}
    verdicts = [f"{e['gpu']} {'fits with changes' if e['gpu'] in fixes else said[bool(e.get('fits'))]} "
                f"({e.get('iteration_ms', 0.0):,.0f} ms per iteration)" for e in per_gpu]
    return message(f"{title}: {'; '.join(verdicts) or 'no GPU answered'}", blocks)


def render_error(summary: str, *, problems: Sequence[str] = (), detail: str = "") -> Message:
    """Render a readable failure: what went wrong and, line by line, what to change (user words escaped)."""
    problems, detail = [escape_text(p) for p in problems], escape_text(detail)
    blocks: list[Block] = [_section(f":warning: *{summary}*" + (f"\n{detail}" if detail else ""))]
    if problems:
        blocks.append(_bullets(list(problems), title="What to change"))
    blocks.append(_context("`/gpugauge help` lists the words gpugauge understands."))
    said = "; ".join(problems) or detail
    return message(f"{summary}: {said}" if said else summary, blocks)


def render_help(*, presets: Collection[str], gpus: Collection[str]) -> Message:
    """Render the command's grammar with an example, the words, the defaults, the presets and GPUs."""
    keys = ", ".join(f"`{k}={grammar.EXAMPLES.get(k, 'N')}`" for k in grammar.KEYS)
    flags = ", ".join(f"`{f}`" for f in grammar.FLAGS)
    blocks: list[Block] = [
        _header("gpugauge: size a training job and rank the machines for it"),
        _section("*Ask for the best machines*\n`/gpugauge resnet50 batch=64 epochs=90 data=150GB "
                 "samples=1.28M budget=$500 deadline=2d spot`\n*Does it fit one GPU?*\n"
                 "`/gpugauge fit resnet50 v100-16gb batch=64`\n*Fine-tune with adapters (LoRA, QLoRA)?*\n"
                 "`/gpugauge llama3-8b qlora rank=16 bf16 batch=4 seq=2048 samples=20k epochs=2`\n"
                 "*Or say it plainly:* `/gpugauge fine-tune llama 7b with lora on 1 gpu, 3 epochs, 50k samples, "
                 "bf16, batch 4, seq 2048, budget $50` or `/gpugauge does llama 7b fit on a t4? batch 1` "
                 "(`imagenet`, `cifar10`, `cifar100`, `svhn`, `mnist`, `fashion-mnist`, `celeba`, `squad`, `imdb`, "
                 "`sst2`, `mnli`, `alpaca`, `dolly` and `gsm8k` give their sample counts, `openwebtext` its tokens; "
                 "CIFAR and SVHN size an image model at 32 x 32)\n"
                 "*Cards you have:* `/gpugauge bert on my 1080 ti, 100k samples` or `... on our 4 "
                 "3090s` ranks them at their power cost beside the clouds' machines (`owned=4xrtx-3090`)\n"
                 "*Cards to buy:* `/gpugauge what should we buy to fine-tune llama 3 8b with lora` lists them, "
                 "the least a run costs over their life first, and the least to spend; `buy or rent` beside the "
                 "clouds, those that pay off soonest first"),
        _section(f"*Settings:* {keys}\n*Switches:* {flags}"),
        _section(f"*Defaults:* batch={grammar.DEFAULT_BATCH_SIZE} (Keras' default; a preset's own recipe's where "
                 "it has one: dcgan, mlp-mnist, vae-mnist 128, unet and lstm-meta-learner 1; "
                 "a language model's fine-tune: seq=1024 batch=8 as "
                 "TRL's SFTTrainer, with its gradient checkpointing, chunked loss and fused AdamW "
                 "(`no-checkpointing` to size without), an encoder's seq=128 as BERT's GLUE recipe, unless you say "
                 "`pretrain`), "
                 "epochs=1 (a ResNet, VGG or AlexNet on imagenet: torchvision's 90; a language model's fine-tune: the "
                 "Trainer's 3), precision="
                 f"{DEFAULT_PRECISION}, bf16 for a model of 1B parameters or more or a decoder (TRL, nanoGPT) "
                 "(fp16 on cards without bf16; "
                 "say `bf16` or `fp16` for "
                 "mixed precision, `fp32` for full; `fp8` for FP8 products on Ada, Hopper and Blackwell), "
                 "objective cost (`balanced` for the "
                 "knee of the cost/time front, `fastest` for time; balanced where you say a count of GPUs, "
                 "`on 8 v100s`, and no budget or deadline), every provider and pricing kind; "
                 "`spot`/`ondemand` choose the cloud pricing and keep owned cards unless you name providers. "
                 "Sizes take units: 150GB, 1.28M, 1T, $500, 2d."),
        _section(f"*Presets:* {', '.join(sorted(presets))} (or a model's Hugging Face name, "
                 "`meta-llama/Llama-2-7b-hf`)"),
        _section(f"*GPUs:* {', '.join(sorted(gpus))} (or as you say them: `a100 80gb`, `1080 ti`, `4x h100`; "
                 "`a100` alone is each A100)"),
    ]
    return message("gpugauge help: /gpugauge <preset> batch=64 epochs=90 samples=1.28M ...", blocks)
