"""Domains a mid-size table can afford (issue 46): six synthetic tables with the traits of the
issue's table, through bench/bench_frontdoor.py's protocol -> docs/results/affordable.md.

Each table is built with a fixed seed (files in bench/out/affordable/), split 2/3 : 1/3 by class,
and for each run s:

* **no schema** — what ``dpkit publish DATA --target T --epsilon 1 --delta 1e-6`` does (the
  domain learned under DP with its share of ε, the rest for the release; bench_frontdoor's
  ``run_table``); identifier columns are declared ``--ignore`` as a user told so would;
* **reviewed draft** — ``taxonomy infer`` without ``--epsilon`` (NOT private), used as is, publish
  at ε = 1;
* **raw** — the same entropy tree on the raw training split (not private);
* **forest** — ``dpkit.forest`` without a schema (ε = 1, δ = 1e-6, its defaults), ROC AUC of its
  probabilities on the raw test split.

The target depends on several columns in each table, so the raw tree is well above chance.

**Tuned on: telco, stroke, cardio. Held out: hotel, bank, occupancy** (run once, at the end, and
nothing was changed after seeing them), and, with ``--public DIR``, three fetched public tables of
the same kinds (pub-telco, pub-stroke, pub-bank; never tuned on; the data stays outside the
repository). The figures are in docs/results/affordable.md.

Run: ``python -m bench.bench_affordable [--runs 3] [--tables telco,stroke] [--forest]``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "affordable"


def _sig(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _split_write(name: str, df: pd.DataFrame, target: str, sep: str = ",", seed: int = 0) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    tr, te = [], []
    for _, rows in df.groupby(target).groups.items():
        rows = rng.permutation(np.asarray(rows))
        k = int(round(len(rows) * 2 / 3))
        tr.append(rows[:k])
        te.append(rows[k:])
    OUT.mkdir(parents=True, exist_ok=True)
    paths = []
    for part, idx in (("train", tr), ("test", te)):
        p = OUT / f"{name}.{part}.csv"
        df.loc[np.sort(np.concatenate(idx))].to_csv(p, index=False, sep=sep)
        paths.append(str(p))
    return paths[0], paths[1]


def telco() -> pd.DataFrame:
    """7,043 rows, 15 categorical predictors (Yes/No, 3-4 values) + a Yes/No target, tenure and two
    charges (TotalCharges blank ' ' where tenure is 0), SeniorCitizen 0/1, a text id."""
    rng = np.random.default_rng(46)
    n = 7043
    yn = ["Yes", "No"]

    def pick(vals: list[str], p: list[float]) -> np.ndarray:
        return rng.choice(vals, size=n, p=p)

    gender = pick(["Male", "Female"], [.505, .495])
    senior = (rng.random(n) < 0.16).astype(int)
    partner = pick(yn, [.48, .52])
    dependents = np.where(partner == "Yes", pick(yn, [.5, .5]), pick(yn, [.1, .9]))
    contract = pick(["Month-to-month", "One year", "Two year"], [.55, .21, .24])
    tenure = np.where(contract == "Month-to-month", rng.integers(0, 40, n),
                      np.where(contract == "One year", rng.integers(5, 72, n), rng.integers(15, 73, n)))
    tenure[rng.random(n) < 0.0016] = 0
    phone = pick(yn, [.9, .1])
    multiple = np.where(phone == "No", "No phone service", pick(yn, [.47, .53]))
    internet = pick(["DSL", "Fiber optic", "No"], [.34, .44, .22])
    addons = {}
    for col, p in (("OnlineSecurity", .35), ("OnlineBackup", .44), ("DeviceProtection", .44), ("TechSupport", .37),
                   ("StreamingTV", .5), ("StreamingMovies", .5)):
        addons[col] = np.where(internet == "No", "No internet service", np.where(rng.random(n) < p, "Yes", "No"))
    paperless = pick(yn, [.59, .41])
    payment = pick(["Electronic check", "Mailed check", "Bank transfer (automatic)", "Credit card (automatic)"],
                   [.34, .23, .22, .21])
    monthly = np.round(20 + 25 * (internet == "DSL") + 50 * (internet == "Fiber optic") + 5 * (phone == "Yes")
                       + 10 * (addons["StreamingTV"] == "Yes") + 10 * (addons["StreamingMovies"] == "Yes")
                       + rng.normal(0, 15, n), 2)
    total = np.round(monthly * tenure * rng.uniform(0.95, 1.05, n), 2)
    z = (-3.0 + 1.6 * (contract == "Month-to-month") - 1.2 * (contract == "Two year") - 0.03 * tenure
         + 1.8 * (internet == "Fiber optic") - 1.2 * (internet == "No") + 1.2 * (payment == "Electronic check")
         + 0.7 * senior + 0.7 * (paperless == "Yes") - 1.0 * (addons["TechSupport"] == "Yes")
         - 0.9 * (addons["OnlineSecurity"] == "Yes") - 0.5 * (partner == "Yes") + 0.6 * (multiple == "Yes")
         + 0.5 * (addons["StreamingMovies"] == "Yes") - 0.5 * (dependents == "Yes"))
    churn = np.where(rng.random(n) < _sig(z), "Yes", "No")
    ids = [f"{rng.integers(1000, 9999)}-{''.join(rng.choice(list('ABCDEFGHIJKLMNOPQRSTUVWXYZ'), 5))}" for _ in range(n)]
    df = pd.DataFrame({"customerID": ids, "gender": gender, "SeniorCitizen": senior, "Partner": partner,
                       "Dependents": dependents, "tenure": tenure, "PhoneService": phone, "MultipleLines": multiple,
                       "InternetService": internet, **addons, "Contract": contract, "PaperlessBilling": paperless,
                       "PaymentMethod": payment, "MonthlyCharges": monthly,
                       "TotalCharges": [" " if t == 0 else f"{v:g}" for t, v in zip(tenure, total, strict=True)],
                       "Churn": churn})
    return df


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def hotel() -> pd.DataFrame:
    """15,000 rows, 30 columns: months as names, NULL in agent/company/children/country, a 0/1 target."""
    rng = np.random.default_rng(4601)
    n = 15_000

    def pick(vals: list[Any], p: list[float]) -> np.ndarray:
        return rng.choice(np.asarray(vals, dtype=object), size=n, p=p)

    hotel_ = pick(["City Hotel", "Resort Hotel"], [.66, .34])
    month_i = rng.choice(12, size=n, p=np.array([5, 6, 8, 9, 10, 10, 11, 12, 9, 8, 6, 6]) / 100)
    lead = np.round(rng.exponential(100, n)).astype(int)
    deposit = pick(["No Deposit", "Non Refund", "Refundable"], [.86, .13, .01])
    segment = pick(["Online TA", "Offline TA/TO", "Groups", "Direct", "Corporate", "Complementary", "Aviation"],
                   [.47, .2, .17, .1, .045, .01, .005])
    channel = np.where(np.isin(segment, ["Online TA", "Offline TA/TO", "Groups"]), "TA/TO",
                       np.where(segment == "Corporate", "Corporate", "Direct"))
    meal = pick(["BB", "HB", "SC", "FB", "Undefined"], [.77, .12, .09, .01, .01])
    country = pick(["PRT", "GBR", "FRA", "ESP", "DEU", "ITA", "IRL", "BEL", "BRA", "NLD", "USA", "CHE", "NULL"],
                   [.4, .1, .09, .07, .06, .03, .03, .02, .02, .02, .02, .01, .13])
    customer = pick(["Transient", "Transient-Party", "Contract", "Group"], [.75, .21, .035, .005])
    room = pick(list("ADEFGBCH"), [.72, .16, .055, .025, .018, .01, .008, .004])
    assigned = np.where(rng.random(n) < 0.85, room, pick(list("ADEFGBCH"), [.6, .2, .07, .05, .03, .02, .02, .01]))
    repeated = (rng.random(n) < 0.03).astype(int)
    prev_cancel = np.where(rng.random(n) < 0.05, rng.integers(1, 4, n), 0)
    prev_ok = np.where(repeated == 1, rng.integers(1, 10, n), 0)
    parking = (rng.random(n) < 0.06).astype(int)
    requests = rng.choice(4, size=n, p=[.55, .28, .13, .04])
    changes = rng.choice(4, size=n, p=[.84, .11, .04, .01])
    waiting = np.where(rng.random(n) < 0.03, rng.integers(1, 120, n), 0)
    adults = rng.choice([1, 2, 3], size=n, p=[.19, .75, .06])
    children = np.where(rng.random(n) < 0.07, rng.integers(1, 3, n), 0).astype(object)
    children[rng.random(n) < 0.002] = "NULL"
    babies = (rng.random(n) < 0.008).astype(int)
    weekend = rng.choice(4, size=n, p=[.43, .28, .27, .02])
    week = rng.choice(7, size=n, p=[.06, .25, .28, .19, .09, .08, .05])
    adr = np.round(np.clip(rng.normal(100, 45, n) + 30 * np.isin(month_i, [6, 7]), 0, 500), 2)
    agent = np.where(rng.random(n) < 0.14, "NULL", rng.choice([9, 240, 1, 14, 7, 6, 250, 241], size=n).astype(str))
    company = np.where(rng.random(n) < 0.94, "NULL", rng.choice([40, 223, 67, 45, 153], size=n).astype(str))
    year = rng.choice([2015, 2016, 2017], size=n, p=[.18, .48, .34])
    weekno = np.clip(month_i * 4.35 + rng.integers(1, 5, n), 1, 53).astype(int)
    day = rng.integers(1, 29, n)
    z = (-1.4 + 4.0 * (deposit == "Non Refund") + 0.006 * np.minimum(lead, 400) - 1.2 * parking - 0.6 * requests
         + 1.5 * (prev_cancel > 0) + 0.5 * (segment == "Groups") - 0.8 * (segment == "Direct")
         - 0.5 * (customer == "Transient-Party") + 0.3 * (hotel_ == "City Hotel") - 0.9 * repeated
         - 0.4 * (changes > 0) + 0.6 * (country == "PRT") - 0.8 * (room != assigned))
    canceled = (rng.random(n) < _sig(z)).astype(int)
    return pd.DataFrame({
        "hotel": hotel_, "lead_time": lead, "arrival_date_year": year, "arrival_date_month": [MONTHS[i] for i in month_i],
        "arrival_date_week_number": weekno, "arrival_date_day_of_month": day, "stays_in_weekend_nights": weekend,
        "stays_in_week_nights": week, "adults": adults, "children": children, "babies": babies, "meal": meal,
        "country": country, "market_segment": segment, "distribution_channel": channel,
        "is_repeated_guest": repeated, "previous_cancellations": prev_cancel,
        "previous_bookings_not_canceled": prev_ok, "reserved_room_type": room, "assigned_room_type": assigned,
        "booking_changes": changes, "deposit_type": deposit, "agent": agent, "company": company,
        "days_in_waiting_list": waiting, "customer_type": customer, "adr": adr,
        "required_car_parking_spaces": parking, "total_of_special_requests": requests, "is_canceled": canceled})


def stroke() -> pd.DataFrame:
    """5,110 rows, a 0/1 target with 4.9 % positives, N/A in bmi, an id column."""
    rng = np.random.default_rng(4602)
    n = 5110
    age = np.round(np.clip(rng.normal(43, 22, n), 0.08, 82), 0)
    gender = rng.choice(["Female", "Male", "Other"], size=n, p=[.586, .4138, .0002])
    hyper = (rng.random(n) < 0.03 + 0.2 * (age > 55)).astype(int)
    heart = (rng.random(n) < 0.01 + 0.12 * (age > 60)).astype(int)
    married = np.where(age > 30, rng.choice(["Yes", "No"], size=n, p=[.85, .15]), rng.choice(["Yes", "No"], size=n, p=[.15, .85]))
    work = np.where(age < 16, "children", rng.choice(["Private", "Self-employed", "Govt_job", "Never_worked"], size=n,
                                                      p=[.67, .19, .135, .005]))
    residence = rng.choice(["Urban", "Rural"], size=n)
    glucose = np.round(np.where(rng.random(n) < 0.15, rng.normal(200, 40, n), rng.normal(92, 20, n)), 2)
    bmi = np.round(np.clip(rng.normal(29, 7, n), 10, 90), 1).astype(object)
    bmi[rng.random(n) < 0.04] = "N/A"
    smoking = rng.choice(["never smoked", "Unknown", "formerly smoked", "smokes"], size=n, p=[.37, .3, .17, .16])
    z = (-10.6 + 0.12 * age + 0.8 * hyper + 0.8 * heart + 0.01 * (glucose - 100) + 0.4 * (smoking == "smokes"))
    stroke_ = (rng.random(n) < _sig(z)).astype(int)
    return pd.DataFrame({"id": rng.permutation(np.arange(1, 80000))[:n], "gender": gender, "age": age,
                         "hypertension": hyper, "heart_disease": heart, "ever_married": married, "work_type": work,
                         "Residence_type": residence, "avg_glucose_level": glucose, "bmi": bmi,
                         "smoking_status": smoking, "stroke": stroke_})


def bank() -> pd.DataFrame:
    """10,000 rows: RowNumber, CustomerId, Surname; 36 % zero balances; Exited 0/1 (~20 %)."""
    rng = np.random.default_rng(4603)
    n = 10_000
    geo = rng.choice(["France", "Spain", "Germany"], size=n, p=[.5, .25, .25])
    gender = rng.choice(["Male", "Female"], size=n, p=[.55, .45])
    age = np.clip(np.round(rng.normal(39, 10, n)), 18, 92).astype(int)
    tenure = rng.integers(0, 11, n)
    balance = np.where(rng.random(n) < 0.36, 0.0, np.round(rng.normal(120000, 30000, n), 2))
    balance = np.where((geo == "Germany") & (balance == 0) & (rng.random(n) < 0.9), np.round(rng.normal(120000, 30000, n), 2), balance)
    products = rng.choice([1, 2, 3, 4], size=n, p=[.5, .46, .03, .01])
    card = (rng.random(n) < 0.7).astype(int)
    active = (rng.random(n) < 0.52).astype(int)
    salary = np.round(rng.uniform(11, 200000, n), 2)
    score = np.clip(np.round(rng.normal(650, 96, n)), 350, 850).astype(int)
    z = (-2.3 + 0.07 * (age - 39) + 0.8 * (geo == "Germany") + 0.5 * (gender == "Female") - 0.9 * active
         - 0.9 * (products == 2) + 2.5 * (products >= 3) + 0.3 * (balance > 0) - 0.001 * (score - 650))
    exited = (rng.random(n) < _sig(z)).astype(int)
    names = ["Smith", "Jones", "Brown", "Taylor", "Williams", "Wilson", "Johnson", "Davies", "Robinson", "Wright"]
    surname = [f"{rng.choice(names)}{rng.integers(0, 300)}" for _ in range(n)]
    return pd.DataFrame({"RowNumber": np.arange(1, n + 1), "CustomerId": 15_565_000 + rng.permutation(n * 10)[:n],
                         "Surname": surname, "CreditScore": score, "Geography": geo, "Gender": gender, "Age": age,
                         "Tenure": tenure, "Balance": balance, "NumOfProducts": products, "HasCrCard": card,
                         "IsActiveMember": active, "EstimatedSalary": salary, "Exited": exited})


def cardio() -> pd.DataFrame:
    """70,000 rows, ';'-delimited, an id, outliers in ap_hi and ap_lo; cardio 0/1 (50 %)."""
    rng = np.random.default_rng(4604)
    n = 70_000
    age = rng.integers(29 * 365, 65 * 365, n)
    gender = rng.choice([1, 2], size=n, p=[.65, .35])
    height = np.round(rng.normal(np.where(gender == 2, 170, 161), 7)).astype(int)
    weight = np.round(rng.normal(74, 14, n), 1)
    ap_hi = np.round(rng.normal(127, 17, n)).astype(int)
    ap_lo = np.round(ap_hi * 0.64 + rng.normal(0, 7, n)).astype(int)
    chol = rng.choice([1, 2, 3], size=n, p=[.75, .14, .11])
    gluc = rng.choice([1, 2, 3], size=n, p=[.85, .07, .08])
    smoke = (rng.random(n) < 0.09).astype(int)
    alco = (rng.random(n) < 0.05).astype(int)
    active = (rng.random(n) < 0.8).astype(int)
    z = (-0.2 + 0.06 * (ap_hi - 127) + 0.00018 * (age - 19500) + 0.6 * (chol - 1) + 0.2 * (gluc > 1)
         + 0.02 * (weight - 74) - 0.25 * active)
    y = (rng.random(n) < _sig(z)).astype(int)
    out_hi = rng.random(n) < 0.003
    ap_hi = np.where(out_hi, rng.choice([-150, -100, 1, 14, 907, 1420, 11500, 16020], size=n), ap_hi)
    out_lo = rng.random(n) < 0.014
    ap_lo = np.where(out_lo, rng.choice([-70, 0, 1, 1000, 1100, 8000, 10000], size=n), ap_lo)
    return pd.DataFrame({"id": np.arange(n), "age": age, "gender": gender, "height": height, "weight": weight,
                         "ap_hi": ap_hi, "ap_lo": ap_lo, "cholesterol": chol, "gluc": gluc, "smoke": smoke,
                         "alco": alco, "active": active, "cardio": y})


def occupancy() -> pd.DataFrame:
    """8,143 rows, ISO timestamps; Occupancy 0/1 from light, CO2 and the hour."""
    rng = np.random.default_rng(4605)
    n = 8143
    t0 = np.datetime64("2015-02-04T17:51:00")
    ts = t0 + (np.arange(n) * 60).astype("timedelta64[s]")
    hour = (ts.astype("datetime64[h]").astype(int) % 24)
    weekday = ((ts.astype("datetime64[D]").astype(int) + 3) % 7) < 5
    occ = ((hour >= 8) & (hour < 18) & weekday & (rng.random(n) < 0.9)).astype(int)
    light = np.round(np.where(occ == 1, rng.normal(450, 60, n), np.clip(rng.normal(20, 60, n), 0, None)), 2)
    co2 = np.round(np.where(occ == 1, rng.normal(900, 200, n), rng.normal(500, 80, n)), 2)
    temp = np.round(rng.normal(20.6 + 0.8 * occ, 0.9), 3)
    hum = np.round(rng.normal(25.7, 5.5, n), 3)
    ratio = np.round(hum * 0.00016 + rng.normal(0, 0.0002, n), 6)
    return pd.DataFrame({"date": ts.astype(str), "Temperature": temp, "Humidity": hum, "Light": light, "CO2": co2,
                         "HumidityRatio": ratio, "Occupancy": occ})


#: name -> (builder, target, declared ignore, delimiter, tuned on, traits)
TABLES: dict[str, tuple[Any, str, tuple[str, ...], str, bool, str]] = {
    "telco": (telco, "Churn", ("customerID",), ",", True,
              "7,043 rows, 15 categorical predictors (Yes/No, 3-4 values), ' ' in TotalCharges, a text id"),
    "hotel": (hotel, "is_canceled", (), ",", False, "15,000 rows, 30 columns, NULL tokens, months as names"),
    "stroke": (stroke, "stroke", ("id",), ",", True, "5,110 rows, 0/1 target with 4.9 % positives, N/A in bmi, id"),
    "bank": (bank, "Exited", ("RowNumber", "CustomerId", "Surname"), ",", False,
             "10,000 rows, id columns, 36 % zero balances"),
    "cardio": (cardio, "cardio", ("id",), ";", True, "70,000 rows, ';' delimiter, id, outliers in ap_hi and ap_lo"),
    "occupancy": (occupancy, "Occupancy", (), ",", False, "8,143 rows, ISO timestamps"),
}


#: fetched public tables (a second held-out set; never tuned on): name -> (file in --public DIR,
#: target, declared ignore); docs/results/affordable.md names where each came from
PUBLIC: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "pub-telco": ("telco21.csv", "Churn", ("customerID",)),
    "pub-stroke": ("stroke.csv", "stroke", ("id",)),
    "pub-bank": ("bank.csv", "Exited", ("RowNumber", "CustomerId", "Surname")),
}
_PUBLIC_DIR: list[str] = []


@functools.cache
def build(name: str) -> Any:
    import bench.bench_frontdoor as fd

    if name in PUBLIC:
        file, target, ignore = PUBLIC[name]
        df = pd.read_csv(Path(_PUBLIC_DIR[0]) / file, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        train, test = _split_write(name, df, target)
        return fd.Table(train, test, target, ignore, f"fetched public table {file}")
    fn, target, ignore, sep, _, what = TABLES[name]
    df = fn()
    train, test = _split_write(name, df, target, sep=sep)
    return fd.Table(train, test, target, ignore, what)


def _forest_auc(t: Any, seed: int) -> float | None:
    import dpkit
    from dpkit.evaluate.metrics import default_positive, roc_auc

    train = pd.read_csv(t.train, dtype=str, keep_default_na=False, sep=None, engine="python")
    test = pd.read_csv(t.test, dtype=str, keep_default_na=False, sep=None, engine="python")
    f = dpkit.forest(train, target=t.target, epsilon=1.0, delta=1e-6, random_state=seed, ignore=list(t.ignore) or None)
    proba = f.predict_proba(test.drop(columns=[t.target]))
    y = test[t.target].str.strip().to_numpy(dtype=object)
    pos = default_positive(list(y))
    return roc_auc(y, proba.to_numpy(), list(f.model.classes), positive=pos)


def _stat(xs: list[float | None]) -> str:
    got = [x for x in xs if x is not None and not np.isnan(x)]
    if not got:
        return "—"
    miss = len(xs) - len(got)
    return (f"{statistics.mean(got):.3f} [{min(got):.3f}–{max(got):.3f}]"
            + (f" ({miss} failed)" if miss else ""))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tables", default="telco,stroke,cardio")
    ap.add_argument("--forest", action="store_true", help="also the forest's ROC AUC")
    ap.add_argument("--no-draft", action="store_true", help="skip the reviewed draft (raw comes with it)")
    ap.add_argument("--public", default=None, metavar="DIR",
                    help="a folder of fetched public tables (telco21.csv, stroke.csv, bank.csv): held out")
    ap.add_argument("--share", type=float, default=None, help="the domain's share of ε (default: the run's rule)")
    ap.add_argument("--options", default="", help="DomainOptions overrides, e.g. partition=gaussian")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import bench.bench_domain as bd
    import bench.bench_frontdoor as fd

    if args.public:
        _PUBLIC_DIR.append(args.public)
    if args.share is not None:
        fd.SHARE = args.share
    if args.options:
        opts: dict[str, Any] = {}
        for kv in args.options.split(","):
            k, v = kv.split("=", 1)
            try:
                opts[k] = float(v)
            except ValueError:
                opts[k] = v
        learned = bd._learned
        bd._learned = lambda *a, **kw: learned(*a, **kw, options=opts)
    from bench.bench_domain import OUT as DOMAIN_OUT

    DOMAIN_OUT.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    import dpkit.sweep.tasks.publish as sweep_publish

    # the sweep's evaluation reads ',' files; a user of a ';' file passes --delimiter: sniff it here
    load = sweep_publish.load_table
    sweep_publish.load_table = lambda path, schema, *a, **kw: load(path, schema, *a, **{"delimiter": None, **kw})
    print("| table | set | no schema AUC [min–max] | reviewed draft | raw | forest | errors |", flush=True)
    print("|---|---|---|---|---|---|---|", flush=True)
    for name in [n for n in args.tables.split(",") if n]:
        t0 = time.time()
        fd.TABLES[name] = fd.Entry(lambda name=name: build(name), TABLES[name][4] if name in TABLES else False,
                                   TABLES[name][5] if name in TABLES else name)
        d = fd.run_table(name, args.runs)
        r = d["results"]
        forest = [fd._one(lambda s=s, name=name: _forest_auc(build(name), s), d["errors"]) for s in range(args.runs)] \
            if args.forest else []
        auc = {k: [x["roc_auc"] if x else None for x in v] for k, v in r.items()}
        print(f"| {name} | {'tuned on' if name in TABLES and TABLES[name][4] else 'held out'} | {_stat(auc['none'])} | "
              f"{_stat(auc['draft'])} | {_stat(auc['raw'])} | {_stat(forest) if forest else '—'} | "
              f"{'; '.join(dict.fromkeys(d['errors']))[:300]} | ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
