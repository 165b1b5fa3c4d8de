"""Places a slash command names ("in frankfurt", "in germany", "in europe"): the cloud regions there.

A continent is a region pattern of both clouds ("eu-*,europe-*"). A city or a country is the regions each cloud has
there, from the clouds' own lists of where their regions are: Google Cloud's "Geography and regions" tables (e.g.
cloud.google.com/tasks/docs/locations and the GKE On-Prem API's supported regions, read 2026-12-07: europe-west3
Frankfurt, europe-west4 Eemshaven (Netherlands), us-central1 Council Bluffs (Iowa), ...), and AWS's Regions and
Zones (docs.aws.amazon.com; recalled, as MariaDB's SkySQL regions page lists them, read 2026-12-07: eu-central-1
Frankfurt, eu-west-1 Ireland, us-east-1 Northern Virginia, ...). Said back with its regions; a region neither cloud
has a GPU machine in simply offers nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

CONTINENTS = {"europe": "eu-*,europe-*", "eu": "eu-*,europe-*", "asia": "ap-*,asia-*", "us": "us-*", "usa": "us-*",
              # a region's family said without its number ("in us-east"): AWS us-east-1, -2 and GCP us-east1, 4, 5
              "us-east": "us-east*", "us-west": "us-west*", "us-central": "us-central*",
              "eu-west": "eu-west*,europe-west*"}

# city or country -> the AWS and GCP regions there
_PLACES: dict[str, tuple[str, ...]] = {
    "frankfurt": ("eu-central-1", "europe-west3"), "berlin": ("europe-west10",),
    "germany": ("eu-central-1", "europe-west3", "europe-west10"),
    "london": ("eu-west-2", "europe-west2"), "uk": ("eu-west-2", "europe-west2"),
    "england": ("eu-west-2", "europe-west2"),
    "ireland": ("eu-west-1",), "dublin": ("eu-west-1",), "paris": ("eu-west-3", "europe-west9"),
    "france": ("eu-west-3", "europe-west9"), "stockholm": ("eu-north-1", "europe-north2"),
    "sweden": ("eu-north-1", "europe-north2"), "finland": ("europe-north1",), "belgium": ("europe-west1",),
    "netherlands": ("europe-west4",), "zurich": ("eu-central-2", "europe-west6"),
    "switzerland": ("eu-central-2", "europe-west6"), "milan": ("eu-south-1", "europe-west8"),
    "italy": ("eu-south-1", "europe-west8", "europe-west12"), "madrid": ("europe-southwest1",),
    "spain": ("eu-south-2", "europe-southwest1"), "warsaw": ("europe-central2",), "poland": ("europe-central2",),
    "tokyo": ("ap-northeast-1", "asia-northeast1"), "osaka": ("ap-northeast-3", "asia-northeast2"),
    "japan": ("ap-northeast-1", "ap-northeast-3", "asia-northeast1", "asia-northeast2"),
    "seoul": ("ap-northeast-2", "asia-northeast3"), "korea": ("ap-northeast-2", "asia-northeast3"),
    "singapore": ("ap-southeast-1", "asia-southeast1"), "jakarta": ("ap-southeast-3", "asia-southeast2"),
    "sydney": ("ap-southeast-2", "australia-southeast1"), "melbourne": ("ap-southeast-4", "australia-southeast2"),
    "australia": ("ap-southeast-2", "ap-southeast-4", "australia-southeast1", "australia-southeast2"),
    "mumbai": ("ap-south-1", "asia-south1"), "delhi": ("asia-south2",), "india": ("ap-south-1", "ap-south-2",
                                                                                     "asia-south1", "asia-south2"),
    "taiwan": ("asia-east1",), "montreal": ("ca-central-1", "northamerica-northeast1"),
    "toronto": ("northamerica-northeast2",), "canada": ("ca-central-1", "northamerica-northeast1",
                                                        "northamerica-northeast2"),
    "virginia": ("us-east-1", "us-east4"), "ohio": ("us-east-2", "us-east5"), "oregon": ("us-west-2", "us-west1"),
    "california": ("us-west-1", "us-west2"), "iowa": ("us-central1",), "dallas": ("us-south1",),
    "texas": ("us-south1",), "brazil": ("sa-east-1", "southamerica-east1"), "israel": ("il-central-1", "me-west1"),
}
_TWO_WORDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sao", "paulo"): ("sa-east-1", "southamerica-east1"), ("são", "paulo"): ("sa-east-1", "southamerica-east1"),
    ("hong", "kong"): ("ap-east-1", "asia-east2"), ("tel", "aviv"): ("il-central-1", "me-west1"),
    ("los", "angeles"): ("us-west2",), ("las", "vegas"): ("us-west4",), ("south", "carolina"): ("us-east1",),
    ("salt", "lake"): ("us-west3",),
}


def place_regions(said: Sequence[str], i: int) -> tuple[str, int, str] | None:
    """Return the regions a place said at said[i] names (a comma list for region=), how many words it took, and
    what to tell back ("" for a continent); None where said[i] names no place."""
    word = said[i]
    if word in CONTINENTS and (word not in ("us", "usa") or "in" in said[max(0, i - 2):i]):  # "in the us"
        return CONTINENTS[word], 1, ""
    pair = tuple(said[i:i + 2])
    if len(pair) == 2 and pair in _TWO_WORDS:
        regions, taken, name = _TWO_WORDS[pair], 2, " ".join(pair)
    elif word in _PLACES:
        regions, taken, name = _PLACES[word], 1, word
    else:
        return None
    return ",".join(regions), taken, f"{name}: the regions there, {', '.join(regions)}"
