"""The one provider registry: each provider's name, fetcher, default regions and instance-family rule.

Every other list of providers (the spec schema's choices, the core's defaults, the Slack grammar,
catalog listings, the daily refresh) derives from PROVIDERS. Adding a cloud is one fetcher module
(catalog/fetchers/NAME.py with `fetch(**kwargs) -> FetchResult`) and one entry here, plus a member of
catalog.types.Provider.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from catalog.fetchers.result import FetchResult
from catalog.types import Provider


def _dotted_family(instance_type: str) -> str:
    # AWS: "g5" for g5.xlarge, "p4d" for p4d.24xlarge.
    return instance_type.split(".", 1)[0]


_GCP_SIZE = re.compile(r"-\d+g?(-nolssd)?$")


def _dashed_family(instance_type: str) -> str:
    # Google Cloud: "a2-highgpu" for a2-highgpu-1g and a3-ultragpu-8g-nolssd, "n1-standard" for n1-standard-8,
    # "n1-standard+nvidia-tesla-t4" for an N1 host with T4s attached (n1-standard-8+1xnvidia-tesla-t4).
    host, plus, accelerator = instance_type.partition("+")
    family = _GCP_SIZE.sub("", host) if _GCP_SIZE.search(host) else host.rsplit("-", 1)[0]
    return f"{family}+{accelerator.split('x', 1)[1]}" if plus and "x" in accelerator else family


def _aws_fetch(**kwargs: Any) -> FetchResult:
    from catalog.fetchers import aws  # the SDK is imported only when this fetcher runs

    return aws.fetch(**kwargs)


def _gcp_fetch(**kwargs: Any) -> FetchResult:
    from catalog.fetchers import gcp

    return gcp.fetch(**kwargs)


@dataclass(frozen=True)
class ProviderEntry:
    """One provider: whether it rents machines, how to fetch its rows, where by default, its families."""

    provider: Provider
    title: str
    rents: bool  # a cloud that rents machines by the hour (on-prem cards are bought)
    fetch: Callable[..., FetchResult] | None
    default_regions: tuple[str, ...]
    family_of: Callable[[str], str]

    @property
    def name(self) -> str:
        """Return the provider's identifier as the spec and the catalog spell it."""
        return self.provider.value


PROVIDERS: dict[str, ProviderEntry] = {
    entry.name: entry
    for entry in (
        ProviderEntry(Provider.AWS, "AWS", rents=True, fetch=_aws_fetch,
                      default_regions=("us-east-1", "us-west-2", "eu-west-1"), family_of=_dotted_family),
        ProviderEntry(Provider.GCP, "Google Cloud", rents=True, fetch=_gcp_fetch,
                      default_regions=("us-central1", "europe-west4", "asia-east1"), family_of=_dashed_family),
        ProviderEntry(Provider.ONPREM, "On-prem cards", rents=False, fetch=None,
                      default_regions=("onprem",), family_of=_dashed_family),
    )
}
PROVIDER_NAMES: tuple[str, ...] = tuple(PROVIDERS)
FETCHED_PROVIDERS: tuple[str, ...] = tuple(name for name, e in PROVIDERS.items() if e.fetch is not None)


def instance_family(instance_type: str, *, gpu: str, provider: Provider) -> str:
    """Return the family an instance type belongs to: "g5" for g5.xlarge, "a2-highgpu" for a2-highgpu-1g."""
    if provider is Provider.ONPREM and instance_type.startswith("onprem-"):
        return f"onprem-{gpu}"
    return PROVIDERS[provider.value].family_of(instance_type)
