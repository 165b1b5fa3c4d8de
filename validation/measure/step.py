"""One training step of a network, as the measured loop runs it, with its phases marked.

A step is `zero_grad(set_to_none=True)`, forward with the loss, backward, optimizer step: the loop
of pytorch/examples (imagenet/main.py keeps `output` in a local until the next step). Optimizers
use their foreach implementations, the CUDA default, which the CPU only uses when asked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure import nets_small

Mark = Callable[[str], contextlib.AbstractContextManager[Any]]


def make_optimizer(name: str, params: Any, *, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                   fused: bool = False) -> torch.optim.Optimizer:
    """Return the named optimizer with foreach on (SGD, momentum 0.9, Adam, AdamW with decay 0.01,
    RMSprop); with
    `fused`, Adam and AdamW as their fused kernels (fused=True: one in-place update, on the CPU since torch 2.4)."""
    if fused and name in ("adam", "adamw"):
        decay = 0.01 if name == "adamw" else 0.0
        kind = torch.optim.AdamW if name == "adamw" else torch.optim.Adam
        return kind(params, lr=lr, betas=betas, weight_decay=decay, fused=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, foreach=True)
    if name == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, betas=betas, foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=betas, weight_decay=0.01, foreach=True)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, foreach=True)
    raise ValueError(name)


def autocast(precision: str) -> contextlib.AbstractContextManager[Any]:
    """Return bf16 autocast for "bf16-mixed", else nothing."""
    if precision == "bf16-mixed":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def backward_and_update(loss: torch.Tensor, mark: Mark, optimizers: list[torch.optim.Optimizer]) -> None:
    """Run a step's backward and its optimizers' update, each marked as its phase."""
    with mark("backward"):
        loss.backward()
    with mark("update"):
        for optimizer in optimizers:
            optimizer.step()


class Trainer(Protocol):
    """A network with its batch, loss and optimizers, that runs one step."""

    modules: list[nn.Module]
    optimizers: list[torch.optim.Optimizer]

    def step(self, mark: Mark) -> None:
        """Run one training step, marking its phases."""

    def held(self) -> list[torch.Tensor]:
        """Return the tensors the loop holds between steps (the batch, outputs kept in locals)."""


def state_tensors(trainer: Trainer) -> Iterator[torch.Tensor]:
    """Yield every tensor alive between steps: weights, buffers, gradients, optimizer state, the batch."""
    for module in trainer.modules:
        yield from module.parameters()
        yield from module.buffers()
        yield from (p.grad for p in module.parameters() if p.grad is not None)
    for opt in trainer.optimizers:
        for state in opt.state.values():
            yield from (v for v in state.values() if isinstance(v, torch.Tensor))
    yield from trainer.held()


class Supervised:
    """A model, a fixed batch and a loss: the ordinary loop.

    `update_interval` > 1 accumulates gradients: that many forward and backward passes of the batch
    (each a micro-batch, its loss divided by the interval), then one optimizer step.
    """

    def __init__(self, model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor | None,
                 loss: Callable[[Any, Any], torch.Tensor], *, optimizer: str, precision: str,
                 keep_output: bool = True, lr: float = 1e-3, update_interval: int = 1, fused: bool = False) -> None:
        self.model, self.inputs, self.targets, self.loss = model.train(), inputs, targets, loss
        self.modules = [model]
        self.optimizers = [make_optimizer(optimizer, [p for p in model.parameters() if p.requires_grad], lr=lr,
                                          fused=fused)]
        self.precision, self.keep_output, self.update_interval = precision, keep_output, update_interval
        self.kept: list[Any] = []

    def step(self, mark: Mark) -> None:
        self.kept = []  # the previous step's locals go when the loop reassigns them
        opt = self.optimizers[0]
        for micro in range(self.update_interval):
            with mark("forward"):
                if micro == 0:
                    opt.zero_grad(set_to_none=True)
                with autocast(self.precision):
                    if self.keep_output:
                        output = self.model(self.inputs)
                        loss = self.loss(output, self.targets)
                        self.kept = [output, loss]
                    else:
                        loss = self.loss(self.model(self.inputs), self.targets)
                        self.kept = [loss]
                    if self.update_interval > 1:
                        loss = loss / self.update_interval
            with mark("backward"):
                loss.backward()
        with mark("optimizer_step"):
            opt.step()

    def held(self) -> list[torch.Tensor]:
        kept = [t for t in self.kept if isinstance(t, torch.Tensor)]
        return [self.inputs, *([] if self.targets is None else [self.targets]), *kept]


def lm_loss(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Return next-token cross-entropy as Hugging Face computes it (labels shifted, logits in fp32)."""
    labels = F.pad(ids, (0, 1), value=-100)[:, 1:]
    return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)


class DCGAN:
    """pytorch/examples dcgan/main.py's step: D on real, D on detached fake, D step; D on fake for G, G step."""

    def __init__(self, batch: int, *, optimizer: str, precision: str) -> None:
        self.netG, self.netD = nets_small.dcgan_generator(), nets_small.dcgan_discriminator()
        self.modules = [self.netG, self.netD]
        self.optimizers = [make_optimizer(optimizer, m.parameters(), lr=2e-4, betas=(0.5, 0.999))
                           for m in (self.netD, self.netG)]
        self.real, self.noise = torch.randn(batch, 3, 64, 64), torch.randn(batch, 100, 1, 1)
        self.label = torch.full((batch,), 1.0)
        self.precision = precision
        self.kept: list[torch.Tensor] = []

    def step(self, mark: Mark) -> None:
        self.kept = []
        opt_d, opt_g = self.optimizers
        bce = nn.BCELoss()
        with mark("forward"):
            self.netD.zero_grad()
            with autocast(self.precision):
                err_real = bce(self.netD(self.real).view(-1).float(), self.label.fill_(1.0))
        with mark("backward"):
            err_real.backward()
        with mark("forward"), autocast(self.precision):
            fake = self.netG(self.noise)
            err_fake = bce(self.netD(fake.detach()).view(-1).float(), self.label.fill_(0.0))
        with mark("backward"):
            err_fake.backward()
        with mark("optimizer_step"):
            opt_d.step()
        with mark("forward"):
            self.netG.zero_grad()
            with autocast(self.precision):
                err_g = bce(self.netD(fake).view(-1).float(), self.label.fill_(1.0))
        with mark("backward"):
            err_g.backward()
        with mark("optimizer_step"):
            opt_g.step()
        self.kept = [fake, err_real, err_fake, err_g]

    def held(self) -> list[torch.Tensor]:
        return [self.real, self.noise, self.label, *self.kept]


class DQN:
    """One DQN update: Q(s, a) of the online network, the frozen target network on s', Huber loss."""

    def __init__(self, batch: int, *, optimizer: str, precision: str) -> None:
        self.online, self.target = nets_small.dqn_network(), nets_small.dqn_network()
        self.target.load_state_dict(self.online.state_dict())
        self.target.requires_grad_(False)
        self.modules = [self.online, self.target]
        self.optimizers = [make_optimizer(optimizer, self.online.parameters(), lr=1e-4)]
        g = torch.Generator().manual_seed(0)
        self.s, self.s2 = torch.rand(batch, 4, 84, 84, generator=g), torch.rand(batch, 4, 84, 84, generator=g)
        self.a = torch.randint(0, 18, (batch, 1), generator=g)
        self.r = torch.rand(batch, generator=g)
        self.precision = precision
        self.kept: list[torch.Tensor] = []

    def step(self, mark: Mark) -> None:
        self.kept = []
        opt = self.optimizers[0]
        with mark("forward"):
            opt.zero_grad(set_to_none=True)
            with autocast(self.precision):
                q = self.online(self.s).gather(1, self.a).squeeze(1)
                with torch.no_grad():
                    target = self.r + 0.99 * self.target(self.s2).max(1)[0]
                loss = F.smooth_l1_loss(q.float(), target.float())
        with mark("backward"):
            loss.backward()
        with mark("optimizer_step"):
            opt.step()
        self.kept = [loss]

    def held(self) -> list[torch.Tensor]:
        return [self.s, self.s2, self.a, self.r, *self.kept]


class MetaLSTM:
    """One meta-training episode of the LSTM meta-learner (markdtw train_learner + meta step), 5-way 5-shot.

    8 inner steps on the 25 support images: the learner copy takes the current parameters
    (detached), computes loss and gradient, and the meta-LSTM turns them into new parameters; then
    the learner with the final parameters on the 75 query images, and the meta-loss's backward
    through the 8 steps.
    """

    def __init__(self, *, optimizer: str, precision: str, steps: int = 8, support: int = 25,
                 query: int = 75) -> None:
        self.learner_w_grad, self.learner_wo_grad = nets_small.meta_learner_net(), nets_small.meta_learner_net()
        n = sum(p.numel() for p in self.learner_w_grad.parameters())
        self.meta = nets_small.MetaLearner(n)
        self.modules = [self.learner_w_grad, self.learner_wo_grad, self.meta]
        self.learner_wo_grad.requires_grad_(False)
        self.optimizers = [make_optimizer(optimizer, self.meta.parameters())]
        g = torch.Generator().manual_seed(0)
        self.xs, self.ys = torch.randn(support, 3, 84, 84, generator=g), torch.arange(support) % 5
        self.xq, self.yq = torch.randn(query, 3, 84, 84, generator=g), torch.arange(query) % 5
        self.steps, self.precision = steps, precision
        self.kept: list[torch.Tensor] = []

    def step(self, mark: Mark) -> None:
        self.kept = []
        opt = self.optimizers[0]
        with mark("forward"):
            opt.zero_grad(set_to_none=True)
            state = None
            c = self.meta.cI
            for _ in range(self.steps):
                flat = c.detach().view(-1)
                params = nets_small.unflatten(self.learner_w_grad, flat)
                with torch.no_grad():
                    for name, p in self.learner_w_grad.named_parameters():
                        p.copy_(params[name])
                self.learner_w_grad.zero_grad()
                with autocast(self.precision):
                    loss = F.cross_entropy(self.learner_w_grad(self.xs).float(), self.ys)
                loss.backward()
                grad = torch.cat([p.grad.view(-1) for p in self.learner_w_grad.parameters()]) / self.xs.shape[0]
                inputs = torch.cat((nets_small.preprocess(loss.detach().expand_as(grad)),
                                    nets_small.preprocess(grad)), 1)
                state = self.meta(inputs, grad.unsqueeze(1), state)
                c = state[4]
            with autocast(self.precision):
                out = torch.func.functional_call(self.learner_wo_grad, nets_small.unflatten(self.learner_wo_grad,
                                                                                            c.view(-1)), (self.xq,))
                meta_loss = F.cross_entropy(out.float(), self.yq)
        with mark("backward"):
            meta_loss.backward()
        with mark("optimizer_step"):
            opt.step()
        self.kept = [meta_loss]

    def held(self) -> list[torch.Tensor]:
        return [self.xs, self.ys, self.xq, self.yq, *self.kept]
