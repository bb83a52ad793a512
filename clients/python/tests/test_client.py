"""The client against a real server (started by the repository's test suite, test/client/python.test.ts).

Environment: HCC_BASE_URL and HCC_TOKEN (an account without daily limit); HCC_TEST_DAILY_TOKEN
(an account whose daily limit is 1); HCC_TEST_LEDGER_ACCOUNT and HCC_TEST_LEDGER_TOKEN (a fresh
account) with HCC_TEST_DB (the server's SQLite database, read to count ledger rows). The server
also serves the test plugins slow-echo, defect and prepare-fails.
"""

from __future__ import annotations

import http.server
import json
import os
import sqlite3
import sys
import threading
import types
import unittest
import urllib.request
from typing import Any, Dict, List, Optional

import hcc_client
from hcc_client import (
    Answer,
    AuthenticationError,
    BadRequestError,
    Client,
    ConflictError,
    HccConnectionError,
    HccError,
    HccTimeoutError,
    InternalServerError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitError,
    ServiceUnavailableError,
    UnprocessableError,
)

ENV = ("HCC_BASE_URL", "HCC_TOKEN", "HCC_TEST_DAILY_TOKEN", "HCC_TEST_LEDGER_ACCOUNT", "HCC_TEST_LEDGER_TOKEN", "HCC_TEST_DB")


def setUpModule() -> None:
    missing = [name for name in ENV if not os.environ.get(name)]
    if missing:
        raise RuntimeError(f"run through npm test (test/client/python.test.ts); missing {', '.join(missing)}")


class Sleeps:
    """A sleep that records what it was asked to wait and returns at once."""

    def __init__(self) -> None:
        self.waits: List[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def documented() -> Dict[str, Any]:
    with urllib.request.urlopen(os.environ["HCC_BASE_URL"] + "/v1/openapi.json") as res:
        return json.loads(res.read())


METHODS = {
    "/v1/clinical": "clinical",
    "/v1/drug-outcomes": "drug_outcomes",
    "/v1/risk-model": "risk_model",
    "/v1/device-outcomes": "device_outcomes",
    "/v1/population": "population",
    "/v1/one-health": "one_health",
    "/v1/temporal": "temporal",
}


class Endpoints(unittest.TestCase):
    client: Client
    doc: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = Client()
        cls.doc = documented()

    def test_every_endpoint_with_its_documented_example(self) -> None:
        answered = 0
        for path, method in METHODS.items():
            operation = self.doc["paths"][path]["post"]
            requests = operation["requestBody"]["content"]["application/json"]["examples"]
            shown = operation["responses"]["200"]["content"]["application/json"]["examples"]
            for name, example in requests.items():
                answer = getattr(self.client, method)(**example["value"])
                self.assertIsInstance(answer, Answer, path)
                self.assertEqual(type(answer).__name__, "".join(w.capitalize() for w in method.split("_")) + "Response")
                # The documented answer (on the default dataset) has the same members.
                self.assertEqual(set(answer) - {"suppressed"}, set(shown[name]["value"]), f"{path} {name}")
                self.assertEqual(answer.hcc_cost, shown[name]["value"]["hcc_cost"])
                answered += 1
        self.assertEqual(answered, 8)

    def test_answers_are_typed_and_are_the_json_mapping(self) -> None:
        answer = self.client.population(analysis_type="trend", cohort_definition={"conditions": ["type_2_diabetes"]}, granularity="yearly", axes=["PO", "NM"])
        self.assertIsInstance(answer.cohort_size, int)
        self.assertEqual(answer.cohort_size, answer["cohort_size"])
        self.assertIsInstance(answer.periods[0], hcc_client.PopulationResponsePeriodsItem)
        self.assertEqual(answer.periods[0].avg_PO, answer["periods"][0]["avg_PO"])
        self.assertEqual(json.loads(json.dumps(answer)), dict(answer))
        drug = self.client.drug_outcomes(drug="metformin", axes_filter=["NM", "PO"])
        self.assertIn(drug.axis_breakdown["NM"].trend, ("positive", "stable", "negative", "no_data", None))
        catalog = self.client.catalog()
        self.assertIn("population", catalog.domains)
        self.assertEqual(catalog.disclosure.min_cell_size, 11)
        usage = self.client.usage()
        self.assertEqual(usage.limits.daily, None)
        self.assertEqual(self.client.healthz().status, "ok")

    def test_answers_display_as_their_chart_in_jupyter(self) -> None:
        answer = self.client.population(analysis_type="trend", cohort_definition={"conditions": ["type_2_diabetes"]}, granularity="yearly", axes=["PO", "NM"])
        bundle = answer._repr_mimebundle_()
        self.assertEqual(bundle["text/plain"], repr(answer))
        spec = bundle["application/vnd.vegalite.v5+json"]
        self.assertEqual(spec["$schema"], "https://vega.github.io/schema/vega-lite/v5.json")
        # The endpoint's view, as the service publishes it, over this answer's rows.
        view = self.doc["paths"]["/v1/population"]["post"]["x-hcc-view"]
        self.assertEqual(spec["layer"], view["spec"]["layer"])
        self.assertEqual(spec["datasets"]["periods"], answer["periods"])
        summary = next(p for p in spec["params"] if p["name"] == "summary")
        self.assertEqual(summary["value"]["cohort_size"], answer.cohort_size)
        self.assertEqual(answer.chart()["$schema"], "https://vega.github.io/schema/vega-lite/v6.json")
        # A series given in the request is a table too (temporal's points).
        temporal = self.client.temporal(patient_axes={"NM": [8, 7, 6.5, 6, 5.8, 5.5]}, predict_ahead=2)
        given = temporal.chart()["datasets"]["given"]
        self.assertEqual([r["value"] for r in given], [8, 7, 6.5, 6, 5.8, 5.5])
        # The view is read from the OpenAPI document once per client.
        self.assertIsNotNone(self.client._views)

    def test_a_chart_with_withheld_values_names_the_rule_and_the_threshold_in_force(self) -> None:
        # 13 patients: many monthly means rest on fewer than 11 (the catalog's threshold).
        narrow = self.client.population(analysis_type="trend", cohort_definition={"age_range": "57-59", "sex": "female", "conditions": ["heart_failure"]}, granularity="monthly")
        self.assertGreater(len(narrow["suppressed"]), 0)
        title = narrow.chart()["title"]
        # The means withheld, and in the view data each one's patients and interval ends.
        listed = len(narrow["suppressed"]) + len(narrow._view_data["suppressed"])
        self.assertEqual(len(narrow._view_data["suppressed"]), 3 * len(narrow["suppressed"]))
        self.assertEqual(title["subtitle"], [f"Withheld: {listed} values rest on fewer than 11 patients (the small-cell rule)"])
        # Withheld only in the view data (one-health's weeks): the threshold is named too.
        weekly = self.client.one_health(query_type="cross_species_correlation", human_condition="avian_influenza", animal_species="poultry", geographic_scope="southeast_asia")
        self.assertNotIn("suppressed", weekly)
        listed = len(weekly._view_data["suppressed"])
        self.assertGreater(listed, 0)
        self.assertEqual(weekly.chart()["title"]["subtitle"], [f"Withheld: {listed} values rest on fewer than 11 patients (the small-cell rule)"])
        # Nothing withheld: no such line, and the catalog is not read for it.
        wide = self.client.population(analysis_type="trend", cohort_definition={"conditions": ["type_2_diabetes"]}, granularity="yearly")
        self.assertNotIn("subtitle", wide.chart()["title"])

    def test_charts_draw_the_view_data_kept_beside_the_answer(self) -> None:
        answer = self.client.device_outcomes(device_category="knee_implant", outcome_metrics=["patient_satisfaction"], time_period="36_months")
        self.assertNotIn("view_data", answer)
        forest = answer.chart()["datasets"]["forest"]
        pooled = [r for r in forest if r["kind"] == "pooled"]
        self.assertEqual([r["estimate"] for r in pooled], [answer.outcomes["patient_satisfaction"]])
        self.assertGreater(len(forest), 1)
        # Without charts, the same answer and a chart without the studies.
        plain = Client(charts=False).device_outcomes(device_category="knee_implant", outcome_metrics=["patient_satisfaction"], time_period="36_months")
        self.assertEqual(dict(plain), dict(answer))
        self.assertEqual(plain.chart()["datasets"]["forest"], [])

    def test_an_answer_without_a_view_displays_as_text(self) -> None:
        answer = self.client.call("/v1/slow-echo", {"tag": "hello", "ms": 0})
        self.assertIsNone(answer.chart())
        self.assertEqual(set(answer._repr_mimebundle_()), {"text/plain"})
        # An answer made by hand (not returned by a call) has no chart either.
        self.assertEqual(set(Answer({"a": 1})._repr_mimebundle_()), {"text/plain"})

    def test_third_party_plugins_through_call(self) -> None:
        answer = self.client.call("/v1/slow-echo", {"tag": "hello", "ms": 0})
        self.assertEqual(answer["tag"], "hello")
        self.assertEqual(answer["hcc_cost"], 0.5)

    def test_rate_limit_headers_after_each_call(self) -> None:
        self.client.catalog()
        last = self.client.last_response
        assert last is not None
        self.assertEqual(last.status, 200)
        self.assertTrue(last.request_id)
        self.assertGreater(last.rate_limit.limit("burst") or 0, 0)
        self.assertIsNotNone(last.rate_limit.remaining("burst"))
        self.assertIsNone(last.rate_limit.remaining("daily"))  # an account without daily limit

    def test_tables_as_rows_and_dataframes(self) -> None:
        population = self.client.population(analysis_type="trend", granularity="yearly", axes=["PO"])
        self.assertEqual(population.rows(), [dict(p) for p in population["periods"]])
        temporal = self.client.temporal(patient_axes={"PO": [7, 6.8, 6.5, 6.1, 5.9]}, predict_ahead=3)
        self.assertEqual([r["step"] for r in temporal.rows()], [1, 2, 3])
        self.assertEqual([r["PO"] for r in temporal.rows()], temporal["predicted_trajectory"]["PO"])
        drug = self.client.drug_outcomes(drug="metformin", axes_filter=["NM", "PO"])
        self.assertEqual([r["axis"] for r in drug.rows()], ["PO", "NM"])
        risk = self.client.risk_model(patient_profile={"axes_snapshot": {"PO": 3.1}, "conditions": ["heart_failure"]}, risk_type="hospitalization")
        self.assertEqual(risk.rows(), [dict(f) for f in risk["contributing_factors"]])
        with self.assertRaises(KeyError):
            self.client.catalog().rows()
        # to_pandas hands the rows to pandas.DataFrame (a stand-in module here: pandas is never required).
        made: List[Any] = []

        class Frame:
            def __init__(self, rows: Any) -> None:
                made.append(rows)

            def set_index(self, name: str) -> str:
                return f"indexed by {name}"

        sys.modules["pandas"] = types.SimpleNamespace(DataFrame=Frame)  # type: ignore[assignment]
        try:
            self.assertEqual(temporal.to_pandas(), "indexed by step")
            self.assertEqual(made[-1], temporal.rows())
            self.assertIsInstance(population.to_pandas(), Frame)
        finally:
            del sys.modules["pandas"]


class Errors(unittest.TestCase):
    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = Client(sleep=Sleeps())

    def test_400_with_each_wrong_value(self) -> None:
        with self.assertRaises(BadRequestError) as caught:
            self.client.call("/v1/population", {"analysis_type": "trend", "granularity": "weekly"})
        e = caught.exception
        self.assertEqual((e.status, e.code), (400, "invalid_request"))
        self.assertEqual(e.errors[0]["path"], "/granularity")
        self.assertTrue(e.request_id)

    def test_401(self) -> None:
        with self.assertRaises(AuthenticationError) as caught:
            Client(token="hcc_not_a_token").catalog()
        self.assertEqual(caught.exception.status, 401)

    def test_404(self) -> None:
        with self.assertRaises(NotFoundError) as caught:
            self.client.call("/v1/no-such-endpoint", {})
        self.assertEqual(caught.exception.code, "not_found")

    def test_409_while_the_same_key_is_answered(self) -> None:
        results: List[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                results.append(Client(timeout=60).call("/v1/slow-echo", {"tag": "slow", "ms": 30000}, idempotency_key="python-409"))
            except HccError as e:
                results.append(e)
            done.set()

        threads = [threading.Thread(target=run, daemon=True) for _ in range(2)]
        for t in threads:
            t.start()
        # Whichever of the two arrives second finds the key in use and is answered at once.
        self.assertTrue(done.wait(25))
        self.assertIsInstance(results[0], ConflictError)
        self.assertEqual(results[0].code, "idempotency_key_in_use")

    def test_413(self) -> None:
        with self.assertRaises(PayloadTooLargeError):
            self.client.call("/v1/slow-echo", {"tag": "x" * 1_100_000, "ms": 0})

    def test_422_with_suggestions(self) -> None:
        with self.assertRaises(UnprocessableError) as caught:
            self.client.drug_outcomes(drug="metfromin")
        e = caught.exception
        self.assertEqual(e.code, "unknown_drug")
        self.assertIn("metformin", e.suggestions)

    def test_422_cohort_too_small_names_the_minimum(self) -> None:
        with self.assertRaises(UnprocessableError) as caught:
            self.client.device_outcomes(device_category="cochlear_implant", outcome_metrics=["infection_rate"], time_period="1_months")
        self.assertEqual(caught.exception.code, "cohort_too_small")
        self.assertEqual(caught.exception.context, {"minimum": 11})

    def test_500_without_internals(self) -> None:
        with self.assertRaises(InternalServerError) as caught:
            self.client.call("/v1/defect", {})
        self.assertEqual(caught.exception.code, "internal_error")
        self.assertNotIn("secret", str(caught.exception.problem))

    def test_503_retried_as_retry_after_says_then_raised(self) -> None:
        sleeps = Sleeps()
        with self.assertRaises(ServiceUnavailableError) as caught:
            Client(sleep=sleeps, retries=2, max_retry_wait=120).call("/v1/prepare-fails", {})
        self.assertEqual(caught.exception.retry_after, 60)
        self.assertEqual(sleeps.waits, [60, 60])
        # A wait longer than max_retry_wait (30 s by default) is not waited for.
        quick = Sleeps()
        with self.assertRaises(ServiceUnavailableError):
            Client(sleep=quick).call("/v1/prepare-fails", {})
        self.assertEqual(quick.waits, [])

    def test_timeout(self) -> None:
        with self.assertRaises(HccTimeoutError) as caught:
            Client(timeout=0.5).call("/v1/slow-echo", {"tag": "late", "ms": 5000})
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "timeout"))
        self.assertIsInstance(caught.exception, TimeoutError)

    def test_no_answer(self) -> None:
        with self.assertRaises(HccConnectionError) as caught:
            Client(base_url="http://127.0.0.1:9").catalog()
        self.assertEqual(caught.exception.status, 0)


class FirstAttemptRefused(http.server.BaseHTTPRequestHandler):
    """Between the client and the server: refuses a POST's first attempt with a burst-limit 429
    (Retry-After: 2), forwards everything else, and records each POST's Idempotency-Key."""

    keys: List[Optional[str]] = []
    refused = False

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        FirstAttemptRefused.keys.append(self.headers.get("idempotency-key"))
        if not FirstAttemptRefused.refused:
            FirstAttemptRefused.refused = True
            problem = json.dumps({"code": "rate_limited", "detail": "Burst limit reached.", "status": 429, "context": {"limit": "burst"}, "hcc_cost": 0}).encode()
            self.send_response(429)
            self.send_header("content-type", "application/problem+json")
            self.send_header("retry-after", "2")
            self.send_header("content-length", str(len(problem)))
            self.end_headers()
            self.wfile.write(problem)
            return
        forwarded = urllib.request.Request(os.environ["HCC_BASE_URL"] + self.path, data=body, method="POST", headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
        with urllib.request.urlopen(forwarded) as res:
            answer = res.read()
            self.send_response(res.status)
            for k, v in res.headers.items():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


class Retries(unittest.TestCase):
    def ledger_rows(self) -> int:
        with sqlite3.connect(f"file:{os.environ['HCC_TEST_DB']}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM usage_ledger WHERE account_id = ?", (os.environ["HCC_TEST_LEDGER_ACCOUNT"],)).fetchone()[0])

    def test_429_retried_after_retry_after_with_one_idempotency_key_and_one_ledger_row(self) -> None:
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FirstAttemptRefused)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            sleeps = Sleeps()
            client = Client(base_url=f"http://127.0.0.1:{proxy.server_address[1]}", token=os.environ["HCC_TEST_LEDGER_TOKEN"], sleep=sleeps)
            before = self.ledger_rows()
            answer = client.population(analysis_type="trend", granularity="yearly", axes=["PO"])
            self.assertGreater(answer.cohort_size, 0)
            self.assertEqual(sleeps.waits, [2.0])
            self.assertEqual(len(FirstAttemptRefused.keys), 2)
            self.assertIsNotNone(FirstAttemptRefused.keys[0])
            self.assertEqual(FirstAttemptRefused.keys[0], FirstAttemptRefused.keys[1])
            self.assertEqual(self.ledger_rows() - before, 1)
            # A retry of the whole call with the same key is the stored answer, charged once.
            again = Client(token=os.environ["HCC_TEST_LEDGER_TOKEN"]).population(analysis_type="trend", granularity="yearly", axes=["PO"], idempotency_key=FirstAttemptRefused.keys[0])
            self.assertEqual(dict(again), dict(answer))
            self.assertEqual(self.ledger_rows() - before, 1)
        finally:
            proxy.shutdown()
            proxy.server_close()

    def test_a_daily_limit_429_is_raised_at_once(self) -> None:
        sleeps = Sleeps()
        client = Client(token=os.environ["HCC_TEST_DAILY_TOKEN"], sleep=sleeps)
        client.temporal(patient_axes={"PO": [7, 6.5, 6.0]})
        self.assertEqual(client.last_response.rate_limit.remaining("daily"), 0)  # type: ignore[union-attr]
        with self.assertRaises(RateLimitError) as caught:
            client.temporal(patient_axes={"PO": [7, 6.5, 6.0]})
        self.assertEqual(caught.exception.limit, "daily")
        self.assertGreater(caught.exception.retry_after or 0, 30)
        self.assertEqual(sleeps.waits, [])

    def test_retry_after_as_seconds_or_http_date(self) -> None:
        self.assertEqual(hcc_client.retry_after_seconds("5"), 5.0)
        self.assertEqual(hcc_client.retry_after_seconds("Wed, 01 Jan 2031 00:00:10 GMT", now=1924992000.0), 10.0)
        self.assertIsNone(hcc_client.retry_after_seconds("soon"))
        self.assertIsNone(hcc_client.retry_after_seconds(None))


PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Package(unittest.TestCase):
    def test_the_version_is_the_projects(self) -> None:
        sys.path.insert(0, os.path.join(PACKAGE, "_build"))
        try:
            import hcc_build
        finally:
            sys.path.pop(0)
        self.assertEqual(hcc_build._project()["version"], hcc_client.__version__)

    def test_the_build_backend_reads_pyproject_without_tomllib_as_tomllib_does(self) -> None:
        import tomllib

        sys.path.insert(0, os.path.join(PACKAGE, "_build"))
        try:
            import hcc_build
        finally:
            sys.path.pop(0)
        with open(os.path.join(PACKAGE, "pyproject.toml"), "rb") as f:
            text = f.read().decode("utf-8")
        self.assertEqual(hcc_build._simple_project(text), tomllib.loads(text)["project"])


class Settings(unittest.TestCase):
    def test_base_url_and_token_from_arguments_or_the_environment(self) -> None:
        client = Client()
        self.assertEqual(client.base_url, os.environ["HCC_BASE_URL"].rstrip("/"))
        self.assertEqual(client.token, os.environ["HCC_TOKEN"])
        other = Client(base_url="http://example.test/", token="t")
        self.assertEqual((other.base_url, other.token), ("http://example.test", "t"))
        saved = os.environ.pop("HCC_BASE_URL")
        try:
            with self.assertRaises(ValueError):
                Client()
        finally:
            os.environ["HCC_BASE_URL"] = saved


if __name__ == "__main__":
    unittest.main()
