"""The date-rewriting task shared by train_dates.py (transformer) and train_dates_bahdanau.py (GRU + additive
attention): render a date (y, m, d), 1900-01-01 .. 2099-12-31, in one of API.md's eight forms; the target is
ISO YYYY-MM-DD.

Held-out rule: a date is held out when crc32("YYYY-MM-DD") % 10 == 0 (about 10% of the 73,049 dates); those
dates are never rendered for training, in any form.
"""
import datetime
import random
import zlib

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
FORMS = ["d Mon yyyy", "d Month yyyy", "Month d, yyyy", "Mon d, yyyy", "Weekday, d Month yyyy", "d.m.yyyy",
         "yyyy/m/d", "yyyy年m月d日"]
FORM_EXAMPLES = ["22 Nov 2026", "22 November 2026", "November 22, 2026", "Nov 22, 2026",
                 "Sunday, 22 November 2026", "22.11.2026", "2026/11/22", "2026年11月22日"]


def all_dates():
    d, end, out = datetime.date(1900, 1, 1), datetime.date(2099, 12, 31), []
    while d <= end:
        out.append(d)
        d += datetime.timedelta(days=1)
    return out


def iso(date):
    return "%04d-%02d-%02d" % (date.year, date.month, date.day)


def is_heldout(date):
    return zlib.crc32(iso(date).encode()) % 10 == 0


def split():
    """(training dates, held-out dates), deterministic."""
    dates = all_dates()
    return [d for d in dates if not is_heldout(d)], [d for d in dates if is_heldout(d)]


def render(date, form, zero_day=False, zero_month=False):
    """-> (text, spans) with spans = {"year": (a, b), "month": (a, b), "day": (a, b)} character ranges of the
    fields in the text. zero_day / zero_month add a leading zero to a one-digit day / numeric month."""
    y = "%04d" % date.year
    d = ("%02d" if zero_day else "%d") % date.day
    mnum = ("%02d" if zero_month else "%d") % date.month
    mname = MONTHS[date.month - 1]
    parts = {
        0: [("day", d), " ", ("month", mname[:3]), " ", ("year", y)],
        1: [("day", d), " ", ("month", mname), " ", ("year", y)],
        2: [("month", mname), " ", ("day", d), ", ", ("year", y)],
        3: [("month", mname[:3]), " ", ("day", d), ", ", ("year", y)],
        4: [WEEKDAYS[date.weekday()] + ", ", ("day", d), " ", ("month", mname), " ", ("year", y)],
        5: [("day", d), ".", ("month", mnum), ".", ("year", y)],
        6: [("year", y), "/", ("month", mnum), "/", ("day", d)],
        7: [("year", y), "年", ("month", mnum), "月", ("day", d), "日"],
    }[form]
    text, spans = "", {}
    for p in parts:
        if isinstance(p, tuple):
            spans[p[0]] = (len(text), len(text) + len(p[1]))
            text += p[1]
        else:
            text += p
    return text, spans


def sample(rng, dates):
    """One random training example: (source text, target text)."""
    date = rng.choice(dates)
    form = rng.randrange(len(FORMS))
    text, _ = render(date, form, rng.random() < 0.5, rng.random() < 0.5)
    return text, iso(date)


def heldout_items(per_form, seed):
    """per_form held-out examples of each form: [{input, target, form, spans}], deterministic. Leading zeros
    alternate so both spellings of one-digit days/months are covered."""
    _, held = split()
    rng = random.Random(seed)
    items = []
    for form in range(len(FORMS)):
        for k, date in enumerate(rng.sample(held, per_form)):
            text, spans = render(date, form, zero_day=k % 2 == 1, zero_month=k % 4 >= 2)
            items.append({"input": text, "target": iso(date), "form": form, "spans": spans})
    return items


def alphabet():
    chars = set("0123456789-")
    for form in range(len(FORMS)):
        for date in (datetime.date(2026, m, 1) + datetime.timedelta(days=k) for m in range(1, 13) for k in range(7)):
            chars |= set(render(date, form)[0])
    return "".join(sorted(chars))


def target_field(t):
    """Which source field ISO target character t (0..9) copies: year for 0-3, month for 5-6, day for 8-9."""
    return "year" if t < 4 else "month" if 5 <= t <= 6 else "day" if t >= 8 else None


def exact_per_form(items, outputs):
    """{form name: share of items whose output equals the target}, and the wrong (input, output) pairs."""
    right, total, wrong = {}, {}, []
    for it, o in zip(items, outputs):
        f = FORMS[it["form"]]
        total[f] = total.get(f, 0) + 1
        if o == it["target"]:
            right[f] = right.get(f, 0) + 1
        else:
            wrong.append((it["input"], o))
    return {f: right.get(f, 0) / total[f] for f in total}, wrong


def heldout_file(items):
    """heldout.json content for the date models."""
    return {"metric": "exact", "rule": "crc32('YYYY-MM-DD') % 10 == 0 (dates never used in training, any form)",
            "forms": FORMS,
            "items": [{"input": it["input"], "target": it["target"], "form": FORMS[it["form"]]} for it in items]}


SOURCE = ("synthetic: every date 1900-01-01..2099-12-31 rendered in 8 forms (training/dates_data.py); held out: "
          "crc32('YYYY-MM-DD') % 10 == 0")
LICENCE = "generated data, no licence restrictions (same licence as attnscope)"
