"""Request and response types and one method per endpoint, generated from the service's OpenAPI
document by scripts/python-client.ts (`npm run client:python`). Do not edit: a test fails when
this file is not what the script makes of the current document."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Mapping, Optional, TypedDict, Union

from ._answer import Answer, _many, _one, _values


def _body(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """The JSON body: the fields given, without those left to their default (None)."""
    return {k: v for k, v in fields.items() if v is not None}


class HealthzResponseChecksValue(Answer):

    @property
    def status(self) -> Literal["ok", "loading", "failed"]:
        """ok: usable; loading: on its way (retry); failed: needs the operator (see the server log)"""
        return self.get("status")  # type: ignore[no-any-return]

    @property
    def detail(self) -> str:
        """What the check found, in words"""
        return self.get("detail")  # type: ignore[no-any-return]

    @property
    def progress(self) -> Optional[float]:
        """Share done of the current step (0–1), while a long step runs (dataset generation, loading)"""
        return self.get("progress")  # type: ignore[no-any-return]


class HealthzResponse(Answer):

    @property
    def status(self) -> Literal["ok", "ready"]:
        return self.get("status")  # type: ignore[no-any-return]

    @property
    def checks(self) -> Optional[Dict[str, HealthzResponseChecksValue]]:
        return _values(HealthzResponseChecksValue, self.get("checks"))

    @property
    def hcc_cost(self) -> float:
        """HCC credits (0 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]


class CatalogResponseAxisDetailsItem(Answer):

    @property
    def code(self) -> str:
        return self.get("code")  # type: ignore[no-any-return]

    @property
    def name(self) -> str:
        return self.get("name")  # type: ignore[no-any-return]


class CatalogResponseEndpointsItem(Answer):

    @property
    def domain(self) -> str:
        return self.get("domain")  # type: ignore[no-any-return]

    @property
    def method(self) -> str:
        return self.get("method")  # type: ignore[no-any-return]

    @property
    def path(self) -> str:
        return self.get("path")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def summary(self) -> str:
        return self.get("summary")  # type: ignore[no-any-return]

    @property
    def experimental(self) -> bool:
        return self.get("experimental")  # type: ignore[no-any-return]


class CatalogResponseTiersItem(Answer):

    @property
    def name(self) -> str:
        return self.get("name")  # type: ignore[no-any-return]

    @property
    def daily_limit(self) -> Optional[int]:
        return self.get("daily_limit")  # type: ignore[no-any-return]

    @property
    def burst_per_minute(self) -> int:
        return self.get("burst_per_minute")  # type: ignore[no-any-return]


class CatalogResponseDataset(Answer):

    @property
    def id(self) -> str:
        """The dataset's id, renewed by every import or generation (the HCC-Dataset-Id header of every data answer)"""
        return self.get("id")  # type: ignore[no-any-return]

    @property
    def as_of(self) -> str:
        """The dataset's as_of date (YYYY-MM-DD): time ranges count back from it"""
        return self.get("as_of")  # type: ignore[no-any-return]

    @property
    def source(self) -> Literal["synthetic", "imported"]:
        """synthetic: generated with planted truths (the default); imported: loaded with hcc data import"""
        return self.get("source")  # type: ignore[no-any-return]

    @property
    def patients(self) -> int:
        return self.get("patients")  # type: ignore[no-any-return]

    @property
    def generator_version(self) -> Optional[str]:
        """Version of the generator that made it (synthetic data)"""
        return self.get("generator_version")  # type: ignore[no-any-return]

    @property
    def format(self) -> Optional[str]:
        """What an imported dataset was imported from: csv, fhir or omop (null for generated data)"""
        return self.get("format")  # type: ignore[no-any-return]

    @property
    def axis_coverage(self) -> Dict[str, float]:
        """Per axis, the share of patients with at least one score (0–1, 3 decimals). 0: no data informs the axis (e.g. no instrument of the axis model in an imported dataset); answers then say so instead of inventing scores"""
        return self.get("axis_coverage")  # type: ignore[no-any-return]


class CatalogResponseDisclosure(Answer):
    """The small-cell rule in force (docs/api.md, Small cells)"""

    @property
    def min_cell_size(self) -> int:
        """No published count or statistic rests on fewer patients than this (HCC_MIN_CELL_SIZE; 1: the rule is off). Smaller counts read null or "fewer than <n>"; a cohort under it is 422 cohort_too_small"""
        return self.get("min_cell_size")  # type: ignore[no-any-return]

    @property
    def count_rounding(self) -> int:
        """Every published count is rounded to a multiple of this (HCC_COUNT_ROUNDING; 1: not rounded)"""
        return self.get("count_rounding")  # type: ignore[no-any-return]


class CatalogResponse(Answer):

    @property
    def axes(self) -> List[str]:
        """The eight axis codes in canonical order"""
        return self.get("axes")  # type: ignore[no-any-return]

    @property
    def domains(self) -> List[str]:
        """Names of the loaded plugins (built-in and third-party)"""
        return self.get("domains")  # type: ignore[no-any-return]

    @property
    def query_types(self) -> List[str]:
        return self.get("query_types")  # type: ignore[no-any-return]

    @property
    def supported_time_ranges(self) -> List[str]:
        return self.get("supported_time_ranges")  # type: ignore[no-any-return]

    @property
    def version(self) -> str:
        """Service version (semver)"""
        return self.get("version")  # type: ignore[no-any-return]

    @property
    def axis_details(self) -> List[CatalogResponseAxisDetailsItem]:
        return _many(CatalogResponseAxisDetailsItem, self.get("axis_details"))

    @property
    def axis_score_range(self) -> List[float]:
        return self.get("axis_score_range")  # type: ignore[no-any-return]

    @property
    def endpoints(self) -> List[CatalogResponseEndpointsItem]:
        return _many(CatalogResponseEndpointsItem, self.get("endpoints"))

    @property
    def vocabularies(self) -> Dict[str, List[str]]:
        """Every closed vocabulary a request accepts, by field name"""
        return self.get("vocabularies")  # type: ignore[no-any-return]

    @property
    def standard_codes(self) -> Dict[str, Dict[str, str]]:
        """Per vocabulary of the loaded dataset, code → its standard code in `system:code` notation (e.g. type_2_diabetes → snomed:44054006); a request may name an entry either way. Codes without a standard code are left out; empty while the dataset loads"""
        return self.get("standard_codes")  # type: ignore[no-any-return]

    @property
    def tiers(self) -> List[CatalogResponseTiersItem]:
        return _many(CatalogResponseTiersItem, self.get("tiers"))

    @property
    def dataset(self) -> Optional[CatalogResponseDataset]:
        """What the answers are based on; null while the dataset loads. Answers are not medical advice."""
        return _one(CatalogResponseDataset, self.get("dataset"))

    @property
    def disclosure(self) -> CatalogResponseDisclosure:
        """The small-cell rule in force (docs/api.md, Small cells)"""
        return _one(CatalogResponseDisclosure, self.get("disclosure"))

    @property
    def hcc_cost(self) -> float:
        """HCC credits (0 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]


class UsageResponseLimitsBurst(Answer):

    @property
    def limit(self) -> int:
        return self.get("limit")  # type: ignore[no-any-return]

    @property
    def used(self) -> int:
        return self.get("used")  # type: ignore[no-any-return]

    @property
    def remaining(self) -> int:
        return self.get("remaining")  # type: ignore[no-any-return]

    @property
    def window_seconds(self) -> int:
        return self.get("window_seconds")  # type: ignore[no-any-return]

    @property
    def reset_seconds(self) -> int:
        """Seconds until the window frees capacity"""
        return self.get("reset_seconds")  # type: ignore[no-any-return]


class UsageResponseLimits(Answer):

    @property
    def burst(self) -> UsageResponseLimitsBurst:
        return _one(UsageResponseLimitsBurst, self.get("burst"))

    @property
    def daily(self) -> Optional[UsageResponseLimitsBurst]:
        """null for tiers without a daily cap"""
        return _one(UsageResponseLimitsBurst, self.get("daily"))


class UsageResponse(Answer):

    @property
    def account_id(self) -> str:
        return self.get("account_id")  # type: ignore[no-any-return]

    @property
    def tier(self) -> str:
        return self.get("tier")  # type: ignore[no-any-return]

    @property
    def day(self) -> str:
        """The UTC day the daily counts belong to (YYYY-MM-DD)"""
        return self.get("day")  # type: ignore[no-any-return]

    @property
    def limits(self) -> UsageResponseLimits:
        return _one(UsageResponseLimits, self.get("limits"))

    @property
    def queries_today(self) -> int:
        """Charged queries today"""
        return self.get("queries_today")  # type: ignore[no-any-return]

    @property
    def hcc_cost_today(self) -> float:
        return self.get("hcc_cost_today")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        """HCC credits (0 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]


class ClinicalResponseContributingData(Answer):

    @property
    def encounters(self) -> Optional[int]:
        """Encounters of the similar patients that started in the evidence window; null when fewer than the minimum cell size but some (listed in `suppressed`)"""
        return self.get("encounters")  # type: ignore[no-any-return]

    @property
    def axis_correlations(self) -> Dict[str, Optional[float]]:
        """`<axis>_<axis>` (canonical order) → Pearson r across the patients' mean scores in the window, 3 decimals; null when those patients are fewer than the minimum cell size (listed in `suppressed`)"""
        return self.get("axis_correlations")  # type: ignore[no-any-return]


class ClinicalResponse(Answer):

    @property
    def reasoning_chain(self) -> List[str]:
        """Ordered steps, each stating a fact computed from the data or the interaction knowledge base"""
        return self.get("reasoning_chain")  # type: ignore[no-any-return]

    @property
    def suggestions(self) -> List[str]:
        """Suggestions of the documented rules keyed on those facts"""
        return self.get("suggestions")  # type: ignore[no-any-return]

    @property
    def confidence(self) -> float:
        """understanding × n / (n + 50) × (0.5 + 0.5 × agreement), 2 decimals (docs/analytics.md#clinical)"""
        return self.get("confidence")  # type: ignore[no-any-return]

    @property
    def contributing_data(self) -> ClinicalResponseContributingData:
        return _one(ClinicalResponseContributingData, self.get("contributing_data"))

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (2.5 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class DrugOutcomesResponseAxisBreakdownValue(Answer):

    @property
    def correlation(self) -> Optional[float]:
        """Pearson r between adherence (PDC) and the axis change from before to during the drug (3 decimals); null when fewer than 3 patients have a known adherence (dispensing records) and scores before and during, or when fewer than the minimum cell size do (listed in `suppressed`)"""
        return self.get("correlation")  # type: ignore[no-any-return]

    @property
    def trend(self) -> Optional[Literal["positive", "stable", "negative", "no_data"]]:
        """Direction of the cohort's within-patient slopes while on the drug; no_data when no cohort patient has 3 scores of the axis on the drug (e.g. an imported dataset without an instrument for the axis); null when fewer patients than the minimum cell size do (listed in `suppressed`)"""
        return self.get("trend")  # type: ignore[no-any-return]


class DrugOutcomesResponse(Answer):

    @property
    def drug(self) -> str:
        return self.get("drug")  # type: ignore[no-any-return]

    @property
    def outcome_type(self) -> str:
        return self.get("outcome_type")  # type: ignore[no-any-return]

    @property
    def cohort_size(self) -> int:
        """Patients in the cohort (rounded when the service rounds counts)"""
        return self.get("cohort_size")  # type: ignore[no-any-return]

    @property
    def efficacy_score(self) -> Optional[float]:
        """Mean over the target axes of Cohen's d: the stratified difference (exposed − comparable unexposed) in points divided by the axis's reference SD, the same for every drug (3 decimals); null when its exposed or comparator patients on some axis are fewer than the minimum cell size (listed in `suppressed`)"""
        return self.get("efficacy_score")  # type: ignore[no-any-return]

    @property
    def adverse_event_rate(self) -> Optional[float]:
        """Adverse events of the drug per cohort patient in the data window (4 decimals); null when the events are fewer than the minimum cell size (but not zero; listed in `suppressed`)"""
        return self.get("adverse_event_rate")  # type: ignore[no-any-return]

    @property
    def axis_breakdown(self) -> Dict[str, DrugOutcomesResponseAxisBreakdownValue]:
        """Per target axis, canonical order"""
        return _values(DrugOutcomesResponseAxisBreakdownValue, self.get("axis_breakdown"))

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (3 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class RiskModelResponseContributingFactorsItem(Answer):

    @property
    def factor(self) -> str:
        """`age`, a condition code or an axis code"""
        return self.get("factor")  # type: ignore[no-any-return]

    @property
    def weight(self) -> Optional[float]:
        """The factor's contribution to the model's log rate (hospitalization) or log odds (readmission, health_decline) against a patient at the population's mean, on that scale: +0.1 multiplies the rate or the odds by e^0.1 ≈ 1.105 — not a percentage of risk (3 decimals); null when the condition's patients with or without the outcome are fewer than the minimum cell size (listed in `suppressed`)"""
        return self.get("weight")  # type: ignore[no-any-return]


class RiskModelResponse(Answer):

    @property
    def risk_type(self) -> str:
        return self.get("risk_type")  # type: ignore[no-any-return]

    @property
    def probability(self) -> Optional[float]:
        """Probability of the event within the horizon (4 decimals); null when a named condition's patients with or without the outcome are fewer than the minimum cell size (listed in `suppressed`)"""
        return self.get("probability")  # type: ignore[no-any-return]

    @property
    def contributing_factors(self) -> List[RiskModelResponseContributingFactorsItem]:
        """This profile's largest contributions (at most 5, non-zero), largest |weight| first"""
        return _many(RiskModelResponseContributingFactorsItem, self.get("contributing_factors"))

    @property
    def recommended_interventions(self) -> int:
        """How many interventions the documented rules recommend for this profile (docs/analytics.md)"""
        return self.get("recommended_interventions")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (5 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class RiskModelPatientProfileAxesSnapshot(TypedDict, total=False):
    """Axis code → current score (0–10); at least one axis. A missing axis is taken at the population's mean (it contributes nothing)."""

    PO: float
    NM: float
    ER: float
    SC: float
    RS: float
    ES: float
    TA: float
    PV: float


class _RiskModelPatientProfileRequired(TypedDict):
    axes_snapshot: RiskModelPatientProfileAxesSnapshot


class RiskModelPatientProfile(_RiskModelPatientProfileRequired, total=False):
    age_range: str
    conditions: List[str]


class DeviceOutcomesResponse(Answer):

    @property
    def device_category(self) -> str:
        return self.get("device_category")  # type: ignore[no-any-return]

    @property
    def studies_analyzed(self) -> int:
        """Studies with at least one implant of the device in the period"""
        return self.get("studies_analyzed")  # type: ignore[no-any-return]

    @property
    def outcomes(self) -> Dict[str, Optional[float]]:
        """Each requested metric → its random-effects pooled estimate across studies (4 decimals); null when it would rest on fewer implants, events or non-events than the minimum cell size (listed in `suppressed`)"""
        return self.get("outcomes")  # type: ignore[no-any-return]

    @property
    def sample_size(self) -> int:
        """Implants of the device placed in the period (rounded when the service rounds counts)"""
        return self.get("sample_size")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (3 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class PopulationResponsePeriodsItem(Answer):

    @property
    def month(self) -> Optional[str]:
        return self.get("month")  # type: ignore[no-any-return]

    @property
    def quarter(self) -> Optional[str]:
        return self.get("quarter")  # type: ignore[no-any-return]

    @property
    def year(self) -> Optional[str]:
        return self.get("year")  # type: ignore[no-any-return]

    @property
    def avg_PO(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_PO")  # type: ignore[no-any-return]

    @property
    def avg_NM(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_NM")  # type: ignore[no-any-return]

    @property
    def avg_ER(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_ER")  # type: ignore[no-any-return]

    @property
    def avg_SC(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_SC")  # type: ignore[no-any-return]

    @property
    def avg_RS(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_RS")  # type: ignore[no-any-return]

    @property
    def avg_ES(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_ES")  # type: ignore[no-any-return]

    @property
    def avg_TA(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_TA")  # type: ignore[no-any-return]

    @property
    def avg_PV(self) -> Optional[float]:
        """Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"""
        return self.get("avg_PV")  # type: ignore[no-any-return]


class PopulationResponse(Answer):

    @property
    def cohort_size(self) -> int:
        """Patients in the cohort (rounded when the service rounds counts)"""
        return self.get("cohort_size")  # type: ignore[no-any-return]

    @property
    def analysis_type(self) -> str:
        return self.get("analysis_type")  # type: ignore[no-any-return]

    @property
    def periods(self) -> List[PopulationResponsePeriodsItem]:
        return _many(PopulationResponsePeriodsItem, self.get("periods"))

    @property
    def statistical_significance(self) -> Optional[float]:
        """Bonferroni-adjusted p-value of the strongest axis trend (one-sample t-test of per-patient slopes, × the number of axes, capped at 1): an upper bound on the probability of so clear a trend on some axis were none trending; docs/analytics.md. null when the patients with a slope on some reported axis are fewer than the minimum cell size (listed in `suppressed`)"""
        return self.get("statistical_significance")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (10 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class PopulationCohortDefinitionAxesThresholdPO(TypedDict, total=False):
    """Inclusive bounds on the patient's mean score of the axis over the data window"""

    min: float
    max: float


class PopulationCohortDefinitionAxesThreshold(TypedDict, total=False):
    """Axis code → { min?, max? } on the patient's mean score over the data window"""

    PO: PopulationCohortDefinitionAxesThresholdPO
    NM: PopulationCohortDefinitionAxesThresholdPO
    ER: PopulationCohortDefinitionAxesThresholdPO
    SC: PopulationCohortDefinitionAxesThresholdPO
    RS: PopulationCohortDefinitionAxesThresholdPO
    ES: PopulationCohortDefinitionAxesThresholdPO
    TA: PopulationCohortDefinitionAxesThresholdPO
    PV: PopulationCohortDefinitionAxesThresholdPO


class PopulationCohortDefinition(TypedDict, total=False):
    age_range: str
    axes_threshold: PopulationCohortDefinitionAxesThreshold
    conditions: List[str]
    drugs: List[str]
    regions: List[str]
    sex: Literal["female", "male", "other", "unknown"]


class OneHealthResponse(Answer):

    @property
    def correlation_found(self) -> bool:
        """The animal series leads the human one: the largest lagged correlation (0–56 days) of the prewhitened log-scale series is positive and its max-statistic permutation p-value (999 permutations, the lag search included) is below 0.05"""
        return self.get("correlation_found")  # type: ignore[no-any-return]

    @property
    def correlation_strength(self) -> float:
        """Pearson r of the prewhitened log(1 + count) series at the best lag (3 decimals)"""
        return self.get("correlation_strength")  # type: ignore[no-any-return]

    @property
    def temporal_lag(self) -> str:
        """Best lag, `<n>_days` (multiples of 7, 0–56)"""
        return self.get("temporal_lag")  # type: ignore[no-any-return]

    @property
    def alert_level(self) -> Literal["low", "moderate", "high", "critical"]:
        return self.get("alert_level")  # type: ignore[no-any-return]

    @property
    def zoonotic_risk(self) -> Literal["low", "moderate", "high"]:
        return self.get("zoonotic_risk")  # type: ignore[no-any-return]

    @property
    def recommendation(self) -> str:
        return self.get("recommendation")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (5 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class TemporalResponse(Answer):

    @property
    def decay_model(self) -> Literal["stable", "linear", "exponential_decay", "exponential_plateau", "logistic"]:
        return self.get("decay_model")  # type: ignore[no-any-return]

    @property
    def predicted_trajectory(self) -> Dict[str, List[float]]:
        return self.get("predicted_trajectory")  # type: ignore[no-any-return]

    @property
    def intervention_urgency(self) -> Literal["low", "moderate", "high", "critical"]:
        return self.get("intervention_urgency")  # type: ignore[no-any-return]

    @property
    def decay_rules_triggered(self) -> List[str]:
        return self.get("decay_rules_triggered")  # type: ignore[no-any-return]

    @property
    def hcc_cost(self) -> float:
        """HCC credits this call cost (7.5 here)"""
        return self.get("hcc_cost")  # type: ignore[no-any-return]

    @property
    def suppressed(self) -> Optional[List[str]]:
        """JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"""
        return self.get("suppressed")  # type: ignore[no-any-return]


class TemporalPatientAxes(TypedDict, total=False):
    """Axis code → series (1 to 8 axes). Series of different lengths are aligned on their most recent value."""

    PO: List[float]
    NM: List[float]
    ER: List[float]
    SC: List[float]
    RS: List[float]
    ES: List[float]
    TA: List[float]
    PV: List[float]


class Endpoints:
    """One method per endpoint of the service (the client implements `_request`)."""

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[Dict[str, Any]],
        *,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        raise NotImplementedError

    def healthz(self, *, timeout: Optional[float] = None) -> HealthzResponse:
        """Liveness: the process answers (GET /healthz)."""
        return HealthzResponse(self._request("GET", "/healthz", None, timeout=timeout))

    def readyz(self, *, timeout: Optional[float] = None) -> HealthzResponse:
        """Readiness: database reachable and data loaded (GET /readyz)."""
        return HealthzResponse(self._request("GET", "/readyz", None, timeout=timeout))

    def catalog(self, *, timeout: Optional[float] = None) -> CatalogResponse:
        """Domains, axes, vocabularies, endpoints and their costs (free) (GET /v1/catalog)."""
        return CatalogResponse(self._request("GET", "/v1/catalog", None, timeout=timeout))

    def usage(self, *, timeout: Optional[float] = None) -> UsageResponse:
        """The caller's usage today and what is left of each limit (free) (GET /v1/usage)."""
        return UsageResponse(self._request("GET", "/v1/usage", None, timeout=timeout))

    def clinical(
        self,
        *,
        query: str,
        axes: Optional[List[Literal["PO", "NM", "ER", "SC", "RS", "ES", "TA", "PV"]]] = None,
        time_range: Optional[Literal["30_days", "90_days", "6_months", "1_year", "all"]] = None,
        response_format: Optional[Literal["structured", "natural_language", "sql_like"]] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> ClinicalResponse:
        """A clinical question in plain English answered with a reasoning chain of computed facts: similar patients, axis trends, drug interactions (POST /v1/clinical).

        Args:
            query: The clinical question in plain English: drugs (generic or brand), conditions, axes (codes in capitals or names), a direction (declining, improving, stable), a duration
            axes: see the API reference
            time_range: Months of evidence counted back from as_of. Default: a duration stated in the query, else all
            response_format: see the API reference
        """
        body = _body({"query": query, "axes": axes, "time_range": time_range, "response_format": response_format})
        return ClinicalResponse(self._request("POST", "/v1/clinical", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/clinical", body)

    def drug_outcomes(
        self,
        *,
        drug: str,
        outcome_type: Optional[Literal["efficacy", "adverse_events", "adherence"]] = None,
        axes_filter: Optional[List[Literal["PO", "NM", "ER", "SC", "RS", "ES", "TA", "PV"]]] = None,
        population_size: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> DrugOutcomesResponse:
        """Outcomes of patients on a drug: standardized effect on the target axes, adverse-event rate, per-axis correlation with adherence and trend (POST /v1/drug-outcomes).

        Args:
            drug: Drug code (catalog vocabulary `drug`), e.g. metformin, or its standard code, e.g. rxnorm:6809
            outcome_type: see the API reference
            axes_filter: see the API reference
            population_size: `minimum_<n>`, n ≥ 1
        """
        body = _body({"drug": drug, "outcome_type": outcome_type, "axes_filter": axes_filter, "population_size": population_size})
        return DrugOutcomesResponse(self._request("POST", "/v1/drug-outcomes", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/drug-outcomes", body)

    def risk_model(
        self,
        *,
        patient_profile: RiskModelPatientProfile,
        risk_type: Literal["hospitalization", "readmission", "health_decline"],
        horizon: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> RiskModelResponse:
        """Probability of hospitalization, readmission or health decline within a horizon for a patient profile, with its largest contributing factors (POST /v1/risk-model).

        Args:
            patient_profile: see the API reference
            risk_type: hospitalization: an admission (not a readmission); readmission: an admission within 30 days of discharge; health_decline: any axis's mean falling by ≥ 1 point
            horizon: `<n>_days`, n from 1 to 3650
        """
        body = _body({"patient_profile": patient_profile, "risk_type": risk_type, "horizon": horizon})
        return RiskModelResponse(self._request("POST", "/v1/risk-model", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/risk-model", body)

    def device_outcomes(
        self,
        *,
        device_category: str,
        outcome_metrics: List[str],
        time_period: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> DeviceOutcomesResponse:
        """Outcomes of a device category pooled across studies (random effects: binomial-normal for rates, DerSimonian–Laird for scores) (POST /v1/device-outcomes).

        Args:
            device_category: Device category code (catalog vocabulary `device`), e.g. knee_implant, or a standard code of an implant procedure or device type, e.g. snomed:609588000
            outcome_metrics: Metric codes (catalog vocabulary `device_metric`); `*_rate` metrics are proportions of implants with the event
            time_period: `<n>_months`, n from 1 to 120
        """
        body = _body({"device_category": device_category, "outcome_metrics": outcome_metrics, "time_period": time_period})
        return DeviceOutcomesResponse(self._request("POST", "/v1/device-outcomes", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/device-outcomes", body)

    def population(
        self,
        *,
        analysis_type: Literal["trend"],
        cohort_definition: Optional[PopulationCohortDefinition] = None,
        granularity: Optional[Literal["monthly", "quarterly", "yearly"]] = None,
        axes: Optional[List[Literal["PO", "NM", "ER", "SC", "RS", "ES", "TA", "PV"]]] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> PopulationResponse:
        """Axis trends of a cohort over time: per-period averages and the significance of the trend (POST /v1/population).

        Args:
            analysis_type: trend: per-period axis averages and the significance of the trend over time
            cohort_definition: see the API reference
            granularity: see the API reference
            axes: Axes to report (default all 8), listed in canonical order
        """
        body = _body({"analysis_type": analysis_type, "cohort_definition": cohort_definition, "granularity": granularity, "axes": axes})
        return PopulationResponse(self._request("POST", "/v1/population", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/population", body)

    def one_health(
        self,
        *,
        human_condition: str,
        animal_species: str,
        geographic_scope: str,
        query_type: Optional[Literal["cross_species_correlation"]] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> OneHealthResponse:
        """Zoonotic signals: whether animal cases lead human cases, by how many days, with an alert level, a risk level and a recommendation (POST /v1/one-health).

        Args:
            human_condition: Zoonotic condition code (catalog vocabulary `zoonotic_condition`), or its standard code, e.g. icd10cm:A69.2
            animal_species: Species code (catalog vocabulary `species`)
            geographic_scope: Region code (catalog vocabulary `region`)
            query_type: see the API reference
        """
        body = _body({"human_condition": human_condition, "animal_species": animal_species, "geographic_scope": geographic_scope, "query_type": query_type})
        return OneHealthResponse(self._request("POST", "/v1/one-health", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/one-health", body)

    def temporal(
        self,
        *,
        patient_axes: TemporalPatientAxes,
        interval: Optional[Literal["daily", "weekly", "monthly", "quarterly", "yearly"]] = None,
        predict_ahead: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> TemporalResponse:
        """How health behaviour decays over time: the 28 decay rules, the best-fitting trajectory model and its prediction (POST /v1/temporal).

        Args:
            patient_axes: Axis code → series (1 to 8 axes). Series of different lengths are aligned on their most recent value.
            interval: see the API reference
            predict_ahead: see the API reference
        """
        body = _body({"patient_axes": patient_axes, "interval": interval, "predict_ahead": predict_ahead})
        return TemporalResponse(self._request("POST", "/v1/temporal", body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, "/v1/temporal", body)


ANSWER_CLASSES = (HealthzResponseChecksValue, HealthzResponse, CatalogResponseAxisDetailsItem, CatalogResponseEndpointsItem, CatalogResponseTiersItem, CatalogResponseDataset, CatalogResponseDisclosure, CatalogResponse, UsageResponseLimitsBurst, UsageResponseLimits, UsageResponse, ClinicalResponseContributingData, ClinicalResponse, DrugOutcomesResponseAxisBreakdownValue, DrugOutcomesResponse, RiskModelResponseContributingFactorsItem, RiskModelResponse, DeviceOutcomesResponse, PopulationResponsePeriodsItem, PopulationResponse, OneHealthResponse, TemporalResponse,)
