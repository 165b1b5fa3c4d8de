"""GET /v1/catalog and its lists: version, sources, prices_as_of, and filters."""

from __future__ import annotations

from flask.testing import FlaskClient

PROBLEM = "application/problem+json"


def test_the_catalog_names_its_version_sources_and_price_date(embedded_client: FlaskClient) -> None:
    info = embedded_client.get("/v1/catalog").get_json()
    assert set(info) == {"version", "prices_as_of", "sources", "prices_as_of_by_provider"}
    assert info["version"] and info["prices_as_of"] and info["sources"]


def test_the_gpu_list_filters_by_memory(embedded_client: FlaskClient) -> None:
    everything = embedded_client.get("/v1/catalog/gpus").get_json()
    big = embedded_client.get("/v1/catalog/gpus?min_memory_bytes=40000000000").get_json()
    assert big["version"] == everything["version"]
    assert 0 < len(big["gpus"]) < len(everything["gpus"])
    assert all(g["memory_bytes"] >= 40_000_000_000 for g in big["gpus"])
    assert {"gtx-1080", "h100-sxm"} <= {g["slug"] for g in everything["gpus"]}


def test_the_instance_list_filters_by_gpu_and_provider(embedded_client: FlaskClient) -> None:
    rows = embedded_client.get("/v1/catalog/instances?gpu=v100-16gb&provider=aws").get_json()["instances"]
    assert rows and all(r["gpu"] == "v100-16gb" and r["provider"] == "aws" for r in rows)
    assert any(r["instance_type"].startswith("p3.") for r in rows)
    assert all(p["price_per_hour_usd"] > 0 and p["region"] for r in rows for p in r["prices"])


def test_the_instance_list_filters_prices_by_region_and_ceiling(embedded_client: FlaskClient) -> None:
    rows = embedded_client.get(
        "/v1/catalog/instances?region=us-east-1&max_price_per_hour_usd=5&pricing=on_demand").get_json()["instances"]
    prices = [p for r in rows for p in r["prices"]]
    assert prices and all(p["region"] == "us-east-1" and p["price_per_hour_usd"] <= 5
                          and p["pricing"] == "on_demand" for p in prices)


def test_a_gpu_filter_takes_a_family_name_as_each_member(embedded_client: FlaskClient) -> None:
    body = embedded_client.get("/v1/catalog/instances?gpu=V100&provider=aws").get_json()
    gpus = {row["gpu"] for row in body["instances"]}
    assert gpus == {"v100-16gb", "v100-32gb"} and body["notes"] == []  # p3 and p3dn


def test_an_unknown_gpu_or_region_is_an_empty_list_with_a_note_and_suggestions(embedded_client: FlaskClient) -> None:
    # Any string is a valid filter in the document: one the catalog lacks matches nothing (issue 16).
    answer = embedded_client.get("/v1/catalog/instances?gpu=v100-61gb")
    assert answer.status_code == 200 and answer.get_json()["instances"] == []
    assert "did you mean" in answer.get_json()["notes"][0]
    for query in ("region=mars-1", "gpu=0"):
        answer = embedded_client.get(f"/v1/catalog/instances?{query}")
        assert answer.status_code == 200 and answer.get_json()["instances"] == [], query
        assert answer.get_json()["notes"], query
    assert embedded_client.get("/v1/catalog/instances?gpu=v100-16gb").get_json()["notes"] == []


def test_bad_filters_are_422_naming_them(embedded_client: FlaskClient) -> None:
    cases = (("provider=azure", "provider"), ("max_price_per_hour_usd=nan", "max_price_per_hour_usd"),
             ("min_memory_bytes=-1", "min_memory_bytes"), ("colour=red", "colour"))
    for query, field in cases:
        path = "/v1/catalog/gpus" if field in ("min_memory_bytes", "colour") else "/v1/catalog/instances"
        answer = embedded_client.get(f"{path}?{query}")
        assert answer.status_code == 422 and field in answer.get_json()["errors"], query


def test_instances_come_in_pages_that_walk_the_whole_list(embedded_client: FlaskClient) -> None:
    seen: list[str] = []
    offset: int | None = 0
    total = None
    while offset is not None:
        page = embedded_client.get(f"/v1/catalog/instances?provider=gcp&limit=50&offset={offset}").get_json()
        assert len(page["instances"]) <= 50 and page["limit"] == 50 and page["offset"] == offset
        total = page["total"]
        seen += [i["instance_type"] for i in page["instances"]]
        offset = page["next_offset"]
    assert total is not None and total > 50 and len(seen) == len(set(seen)) == total
    first = embedded_client.get("/v1/catalog/instances").get_json()
    assert len(first["instances"]) == first["limit"] == 100 and first["next_offset"] == 100
    assert embedded_client.get("/v1/catalog/instances?limit=0").status_code == 422
