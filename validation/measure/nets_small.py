"""The small presets in plain PyTorch: DCGAN and the MNIST VAE of pytorch/examples, the Nature DQN,
and the LSTM meta-learner of Ravi & Larochelle 2017 (after markdtw/meta-learning-lstm-pytorch)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def dcgan_generator(nz: int = 100, ngf: int = 64) -> nn.Sequential:
    """Return pytorch/examples dcgan/main.py's Generator (64x64 RGB)."""
    def up(cin: int, cout: int, stride: int, pad: int) -> list[nn.Module]:
        return [nn.ConvTranspose2d(cin, cout, 4, stride, pad, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]
    return nn.Sequential(*up(nz, ngf * 8, 1, 0), *up(ngf * 8, ngf * 4, 2, 1), *up(ngf * 4, ngf * 2, 2, 1),
                         *up(ngf * 2, ngf, 2, 1), nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())


def dcgan_discriminator(ndf: int = 64) -> nn.Sequential:
    """Return pytorch/examples dcgan/main.py's Discriminator."""
    def down(cin: int, cout: int, bn: bool) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 4, 2, 1, bias=False), *([nn.BatchNorm2d(cout)] if bn else []),
                nn.LeakyReLU(0.2, inplace=True)]
    return nn.Sequential(*down(3, ndf, False), *down(ndf, ndf * 2, True), *down(ndf * 2, ndf * 4, True),
                         *down(ndf * 4, ndf * 8, True), nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid())


class VAE(nn.Module):
    """pytorch/examples vae/main.py: 784-400-(20, 20)-400-784."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc21, self.fc22 = nn.Linear(784, 400), nn.Linear(400, 20), nn.Linear(400, 20)
        self.fc3, self.fc4 = nn.Linear(20, 400), nn.Linear(400, 784)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h1 = F.relu(self.fc1(x.view(-1, 784)))
        mu, logvar = self.fc21(h1), self.fc22(h1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


def vae_loss(out: tuple[torch.Tensor, torch.Tensor, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Return the reconstruction + KL loss of vae/main.py."""
    recon, mu, logvar = out
    bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
    return bce - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def dqn_network(actions: int = 18) -> nn.Sequential:
    """Return the Nature DQN (Mnih et al. 2015) on 4 stacked 84x84 frames."""
    return nn.Sequential(nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                         nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(),
                         nn.Linear(512, actions))


def meta_learner_net(classes: int = 5) -> nn.Sequential:
    """Return the learner of markdtw learner.py: four conv(32)-BN-ReLU-maxpool blocks and a classifier (84x84)."""
    layers: list[nn.Module] = []
    for i in range(4):
        layers += [nn.Conv2d(3 if i == 0 else 32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                   nn.MaxPool2d(2)]
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(32 * 5 * 5, classes))


class MetaLearner(nn.Module):
    """The coordinate-wise meta-LSTM (markdtw metalearner.py): an LSTM cell and the learner-update cell."""

    def __init__(self, learner_parameters: int, *, hidden: int = 20, inputs: int = 4) -> None:
        super().__init__()
        self.lstm = nn.LSTMCell(inputs, hidden)
        self.WF, self.WI = nn.Parameter(torch.empty(hidden + 2, 1)), nn.Parameter(torch.empty(hidden + 2, 1))
        self.bF, self.bI = nn.Parameter(torch.full((1, 1), 4.0)), nn.Parameter(torch.full((1, 1), -5.0))
        self.cI = nn.Parameter(torch.empty(learner_parameters, 1))
        for p in (self.WF, self.WI, self.cI):
            nn.init.uniform_(p, -0.01, 0.01)

    def forward(self, x: torch.Tensor, grad: torch.Tensor, state: list[torch.Tensor] | None) -> list[torch.Tensor]:
        """One update step: new (h, c) of the LSTM, and f, i, new learner parameters of the meta cell."""
        n = grad.shape[0]
        if state is None:
            h0 = torch.zeros(n, self.lstm.hidden_size)
            state = [h0, h0.clone(), torch.zeros(n, 1), torch.zeros(n, 1), self.cI]
        h, c, f_prev, i_prev, c_prev = state
        h, c = self.lstm(x, (h, c))
        f = torch.sigmoid(torch.cat([h, c_prev, f_prev], 1) @ self.WF + self.bF)
        i = torch.sigmoid(torch.cat([h, c_prev, i_prev], 1) @ self.WI + self.bI)
        return [h, c, f, i, f * c_prev - i * grad]


def preprocess(x: torch.Tensor, p: float = 10.0) -> torch.Tensor:
    """Ravi & Larochelle's log-magnitude and sign preprocessing of losses and gradients (2 values each)."""
    indicator = (x.abs() >= torch.exp(torch.tensor(-p))).to(x.dtype)
    x_proc1 = indicator * torch.log(x.abs() + 1e-8) / p + (1 - indicator) * -1
    x_proc2 = indicator * torch.sign(x) + (1 - indicator) * torch.exp(torch.tensor(p)) * x
    return torch.stack((x_proc1, x_proc2), 1)


def unflatten(template: nn.Module, flat: torch.Tensor) -> dict[str, torch.Tensor]:
    """Split a flat parameter vector into the learner's named parameters."""
    out, start = {}, 0
    for name, p in template.named_parameters():
        out[name] = flat[start:start + p.numel()].view_as(p)
        start += p.numel()
    return out
