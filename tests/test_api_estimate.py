"""POST /v1/estimate: the contract's requirements, synchronously, and per requested GPU."""

from __future__ import annotations

from flask.testing import FlaskClient

from tests.service_helpers import contract_check, example_spec, wait_for_job


def test_an_estimate_conforms_to_the_contract(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/estimate", json=example_spec())
    assert answer.status_code == 200
    assert contract_check().contract_requirements(answer.get_json()) == []


def test_requested_gpus_each_get_a_fit_and_a_time(embedded_client: FlaskClient) -> None:
    spec = {**example_spec(), "gpus": ["v100-16gb", "a100-80gb"], "gpu_count": 2}
    body = embedded_client.post("/v1/estimate", json=spec).get_json()
    assert contract_check().contract_requirements(body) == []
    assert [(row["gpu"], row["gpu_count"]) for row in body["per_gpu"]] == [("v100-16gb", 2), ("a100-80gb", 2)]
    assert all(row["training_hours"] > 0 for row in body["per_gpu"])


def test_an_unknown_gpu_is_422_naming_its_place_in_the_list(embedded_client: FlaskClient) -> None:
    spec = {**example_spec(), "gpus": ["v100-16gb", "v1000"]}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "gpus[1]" in answer.get_json()["errors"]


def test_gpus_may_be_named_as_people_write_them_and_a_family_is_each_member(
        embedded_client: FlaskClient) -> None:
    spec = {**example_spec(), "gpus": ["RTX 4090", "a100", "a100-80gb"]}
    body = embedded_client.post("/v1/estimate", json=spec).get_json()
    assert contract_check().contract_requirements(body) == []
    assert [row["gpu"] for row in body["per_gpu"]] == [  # each once, as slugs
        "rtx-4090", "a100-40gb", "a100-80gb", "a100-pcie-40gb", "a100-pcie-80gb"]


def test_a_profile_gpu_that_names_a_family_is_422_listing_the_members(embedded_client: FlaskClient) -> None:
    spec = example_spec()
    spec = {**spec, "training": {**spec["training"], "profile": {"gpu": "h100", "iteration_ms": 100.0}}}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 422
    [message] = answer.get_json()["errors"]["training.profile.gpu"]
    assert "names 3 GPUs (h100-sxm, h100-pcie, h100-nvl): name one" in message
    spec["training"]["profile"]["gpu"] = "H100 SXM5"
    assert embedded_client.post("/v1/estimate", json=spec).status_code == 200


def test_the_api_and_the_queue_agree_on_requirements(embedded_client: FlaskClient) -> None:
    estimate = embedded_client.post("/v1/estimate", json=example_spec("vae-mnist")).get_json()
    location = embedded_client.post("/v1/recommendations", json=example_spec("vae-mnist")).headers["Location"]
    job = wait_for_job(embedded_client, location)
    assert job["result"]["requirements"]["gpu_memory_bytes"] == estimate["gpu_memory_bytes"]


def test_an_estimate_names_the_catalog_version_and_price_date_it_was_read_with(embedded_client: FlaskClient) -> None:
    body = embedded_client.post("/v1/estimate", json=example_spec()).get_json()
    info = embedded_client.get("/v1/catalog").get_json()
    assert body["catalog"] == {"version": info["version"], "prices_as_of": info["prices_as_of"]}


def test_a_repeated_body_is_answered_as_the_first_time_and_its_spec_is_not_changed(
        embedded_client: FlaskClient) -> None:
    spec = {**example_spec(), "gpus": ["v100-16gb"], "gpu_count": 2}
    first_answer = embedded_client.post("/v1/estimate", json=spec)
    again_answer = embedded_client.post("/v1/estimate", json=spec)  # the bytes kept from the first
    first, again = first_answer.get_json(), again_answer.get_json()
    assert again == first and first["per_gpu"][0]["gpu_count"] == 2
    assert again_answer.get_data() == first_answer.get_data() and again_answer.mimetype == "application/json"
    # the same spec without the GPUs, then with other ones: each its own answer, not a remembered one
    plain = embedded_client.post("/v1/estimate", json=example_spec()).get_json()
    assert plain["per_gpu"] == []
    other = embedded_client.post("/v1/estimate", json={**spec, "gpus": ["a100-80gb"]}).get_json()
    assert [row["gpu"] for row in other["per_gpu"]] == ["a100-80gb"]
    assert embedded_client.post("/v1/estimate", json=spec).get_json() == first


def test_a_refused_body_is_refused_each_time_it_is_sent(embedded_client: FlaskClient) -> None:
    spec = {**example_spec(), "training": {"batch_size": 0}}
    answers = [embedded_client.post("/v1/estimate", json=spec) for _ in range(2)]
    assert [a.status_code for a in answers] == [422, 422]
    assert answers[0].get_json()["errors"] == answers[1].get_json()["errors"]
    assert "training.batch_size" in answers[0].get_json()["errors"]


def test_a_mean_sequence_length_above_the_sequence_length_is_422_naming_it(embedded_client: FlaskClient) -> None:
    spec = {"model": {"preset": "bert-base"},
            "training": {"batch_size": 8, "sequence_length": 128, "mean_sequence_length": 129}}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "training.mean_sequence_length" in answer.get_json()["errors"]
    spec["training"]["mean_sequence_length"] = 96  # type: ignore[index]
    assert embedded_client.post("/v1/estimate", json=spec).status_code == 200
