"""Provider fetchers, one per provider with the same shape, registered in FETCHERS.

Each fetcher is `fetch(*, client=None, regions=..., progress=..., **injected_clients) -> FetchResult`
(catalog/fetchers/result.py). The registry imports a provider's SDK only when that fetcher runs.
"""

from __future__ import annotations

from typing import Any

from catalog.fetchers.result import CredentialsError, FetchError, FetchResult, Progress


def _aws(**kwargs: Any) -> FetchResult:
    from catalog.fetchers import aws

    return aws.fetch(**kwargs)


def _gcp(**kwargs: Any) -> FetchResult:
    from catalog.fetchers import gcp

    return gcp.fetch(**kwargs)


FETCHERS = {"aws": _aws, "gcp": _gcp}
DEFAULT_REGIONS = {
    "aws": ("us-east-1", "us-west-2", "eu-west-1"),
    "gcp": ("us-central1", "europe-west4", "asia-east1"),
}

__all__ = ["DEFAULT_REGIONS", "FETCHERS", "CredentialsError", "FetchError", "FetchResult", "Progress"]
