"""The synthetic English -> Chinese task of models/translate-en-zh (train_translate_en_zh.py).

No public-domain English-Chinese parallel corpus can be installed here: the only registries reachable are Debian's
and npm's, and Debian ships none (checked 2026-11-27: `apt-cache search parallel corpus` and `apt-cache search
bilingual` find nothing; the Chinese packages are fonts, input methods, TeX support and locale tasks). So the pairs
are generated, the task the issue names: numbers, dates and simple quantities.

Forms (source -> target):
  digits    "1205"              -> "一千二百零五"     (0 .. 99,999,999)
  grouped   "1,205"             -> "一千二百零五"     (1,000 .. 99,999,999, thousands separated by commas)
  words     "forty-two"         -> "四十二"           (0 .. 999,999, American English, no "and")
  date      "3 May 2021"        -> "2021年5月3日"     (1900-01-01 .. 2099-12-31)
  date-us   "May 3, 2021"       -> "2021年5月3日"
  quantity  "12 books"          -> "十二本书"         (1 .. 9,999 with a measure word; 2 alone is 两)

Chinese number reading (数字读法), as written in zh():
  - digits with their units 千 百 十 within a group of four, 万 after the upper group (numbers < 10^8: no 亿);
  - zeros inside a group, or between the 万 group and a lower group under 1,000, are read as one 零
    (1005 一千零五, 1050 一千零五十, 10010 一万零一十, 100500 十万零五百); trailing zeros are not read;
  - a number that starts with 一十 drops the 一 (10 十, 15 十五, 150000 十五万), inside it stays (110 一百一十);
  - 二 everywhere in a bare number (二百, 二千, 二万); 两 only for the quantity two before a measure word (两本书).

Held-out rule: a number n is held out when crc32("n:<n>") % 10 == 0 and a date when crc32("YYYY-MM-DD") % 10 == 0;
held-out numbers are never rendered for training in any number form (digits, grouped, words, quantity) and
held-out dates in neither date form.

Alignment pairs: for the digit forms (digits, grouped, date, date-us, quantity) every target character that reads
one source digit is paired with it: a numeral 一..九 (or 两) with the digit it reads, the 十 of a leading 一十
with the source '1', and a date's Arabic digits with the source digits they copy. Units (十百千万), 零 and the
date's 年月日 read no single digit and are not paired.
"""
import datetime
import random
import zlib

DIGITS_ZH = "零一二三四五六七八九"
UNITS_ZH = ["千", "百", "十", ""]
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
# (singular, plural, measure word + noun)
NOUNS = [("book", "books", "本书"), ("apple", "apples", "个苹果"), ("person", "people", "个人"),
         ("cat", "cats", "只猫"), ("dog", "dogs", "只狗"), ("car", "cars", "辆车"), ("day", "days", "天"),
         ("year", "years", "年"), ("kilogram", "kilograms", "公斤"), ("cup of tea", "cups of tea", "杯茶")]
FORMS = ["digits", "grouped", "words", "date", "date-us", "quantity"]
FORM_EXAMPLES = ["1205", "1,205", "forty-two", "3 May 2021", "May 3, 2021", "12 books"]
MAX_NUMBER = 10 ** 8
MAX_WORDS = 10 ** 6


def _group(n, digit0):
    """Reading of 1 <= n <= 9999 as a four-digit group whose thousands digit is source digit digit0 (may be
    negative: leading zeros of the group that the source does not write) -> [(char, source digit or None)]."""
    out, zero, started = [], False, False
    for i, d in enumerate((n // 1000, n // 100 % 10, n // 10 % 10, n % 10)):
        if d == 0:
            zero = zero or started
            continue
        if zero:
            out.append(("零", None))
            zero = False
        out.append((DIGITS_ZH[d], digit0 + i))
        if UNITS_ZH[i]:
            out.append((UNITS_ZH[i], None))
        started = True
    return out


def zh_aligned(n):
    """Chinese reading of 0 <= n < 10^8 -> [(char, index of the source digit it reads, counting from the first
    digit of str(n), or None)]."""
    if n == 0:
        return [("零", 0)]
    width = len(str(n))
    hi, lo = divmod(n, 10000)
    out = []
    if hi:
        out += _group(hi, width - 8) + [("万", None)]
    if lo:
        if hi and lo < 1000:
            out.append(("零", None))
        out += _group(lo, width - 4)
    if len(out) >= 2 and out[0][0] == "一" and out[1][0] == "十":
        out = [("十", out[0][1])] + out[2:]
    return out


def zh(n):
    return "".join(c for c, _ in zh_aligned(n))


def en_words(n):
    """American English words for 0 <= n < 10^6: 'forty-two', 'one hundred five', 'twelve thousand three'."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("-" + ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return ONES[n // 100] + " hundred" + (" " + en_words(n % 100) if n % 100 else "")
    return en_words(n // 1000) + " thousand" + (" " + en_words(n % 1000) if n % 1000 else "")


def number_heldout(n):
    return zlib.crc32(("n:%d" % n).encode()) % 10 == 0


def iso(date):
    return "%04d-%02d-%02d" % (date.year, date.month, date.day)


def date_heldout(date):
    return zlib.crc32(iso(date).encode()) % 10 == 0


def _digit_positions(text):
    return [i for i, c in enumerate(text) if c.isdigit()]


def _number_item(n, form):
    """-> (source, target, pairs [[target index, source index], ...])"""
    if form == "words":
        return en_words(n), zh(n), []
    source = "{:,}".format(n) if form == "grouped" else str(n)
    digits = _digit_positions(source)
    chars = zh_aligned(n)
    return source, "".join(c for c, _ in chars), [[t, digits[k]] for t, (c, k) in enumerate(chars)
                                                  if k is not None]


def _date_item(date, form):
    y, m, d = str(date.year), str(date.month), str(date.day)
    if form == "date":
        source = "%s %s %s" % (d, MONTHS[date.month - 1], y)
        at = {"d": 0, "y": len(d) + 1 + len(MONTHS[date.month - 1]) + 1}
    else:
        source = "%s %s, %s" % (MONTHS[date.month - 1], d, y)
        at = {"d": len(MONTHS[date.month - 1]) + 1, "y": len(MONTHS[date.month - 1]) + 1 + len(d) + 2}
    target = "%s年%s月%s日" % (y, m, d)
    pairs = [[i, at["y"] + i] for i in range(len(y))]
    pairs += [[len(y) + 1 + len(m) + 1 + i, at["d"] + i] for i in range(len(d))]
    # the month is a name in the source: its digits read no source digit
    return source, target, pairs


def _quantity_item(n, noun):
    singular, plural, zh_noun = NOUNS[noun]
    source = "%d %s" % (n, singular if n == 1 else plural)
    chars = [("两", 0)] if n == 2 else zh_aligned(n)
    target = "".join(c for c, _ in chars) + zh_noun
    return source, target, [[t, k] for t, (c, k) in enumerate(chars) if k is not None]


def _draw_number(rng, form):
    """A training (held_out=False) number for `form`: the number of digits uniform over the form's range."""
    lo_digits = 4 if form == "grouped" else 1
    hi_digits = 6 if form == "words" else 4 if form == "quantity" else 8
    k = rng.randint(lo_digits, hi_digits)
    return rng.randrange(0 if k == 1 else 10 ** (k - 1), 10 ** k)


def _draw(rng, form, held):
    """One (source, target, pairs) of `form` whose number or date is held out when held is True."""
    while True:
        if form in ("date", "date-us"):
            date = datetime.date(1900, 1, 1) + datetime.timedelta(days=rng.randrange(73049))
            if date_heldout(date) == held:
                return _date_item(date, form)
        else:
            n = _draw_number(rng, form)
            if form == "quantity":
                n = max(n, 1)
                noun = rng.randrange(len(NOUNS))
            if number_heldout(n) == held:
                return _quantity_item(n, noun) if form == "quantity" else _number_item(n, form)


def sample(rng):
    """One random training pair (source, target): the form uniform, never a held-out number or date."""
    source, target, _ = _draw(rng, FORMS[rng.randrange(len(FORMS))], False)
    return source, target


def heldout_items(per_form, seed):
    """per_form held-out examples of each form, distinct within a form: [{input, target, form, align}]."""
    rng = random.Random(seed)
    items = []
    for form in FORMS:
        seen = set()
        while len(seen) < per_form:
            source, target, pairs = _draw(rng, form, True)
            if source in seen:
                continue
            seen.add(source)
            items.append({"input": source, "target": target, "form": form, "align": pairs})
    return items


def alphabet():
    chars = set("0123456789,- " + DIGITS_ZH + "两十百千万年月日")
    for w in ONES + TENS + MONTHS + ["hundred", "thousand"]:
        chars |= set(w)
    for s, p, z in NOUNS:
        chars |= set(s + p + z)
    return "".join(sorted(chars))


def exact_per_form(items, outputs):
    right, total, wrong = {}, {}, []
    for it, o in zip(items, outputs):
        f = it["form"]
        total[f] = total.get(f, 0) + 1
        if o == it["target"]:
            right[f] = right.get(f, 0) + 1
        else:
            wrong.append((it["input"], it["target"], o))
    return {f: right.get(f, 0) / total[f] for f in total}, wrong


HELDOUT_RULE = ("numbers: crc32('n:<n>') % 10 == 0, dates: crc32('YYYY-MM-DD') % 10 == 0 (never used in training, "
                "in any form)")
ALIGN_NOTE = ("align: [target character index, source character index] for every target character that reads "
              "one source digit (numerals 一..九/两 and a leading 十 read their digit, a date's digits the digits "
              "they copy); the query that writes target character t is decoder position t (position 0 is <s>)")


def heldout_file(items):
    return {"metric": "exact", "rule": HELDOUT_RULE, "forms": FORMS, "alignNote": ALIGN_NOTE, "items": items}


SOURCE = ("synthetic (no public-domain English-Chinese parallel corpus is available from Debian or npm): numbers "
          "in digits, with thousands separators and in English words, dates in two English forms and quantities "
          "with a measure word, rendered in Chinese (training/translate_en_zh_data.py); held out: " + HELDOUT_RULE)
LICENCE = "generated data, no licence restrictions (same licence as attnscope)"


if __name__ == "__main__":
    for n in (0, 2, 10, 15, 42, 110, 1005, 1050, 1205, 10010, 100500, 150000, 20000000, 99999999, 10000001):
        print(n, zh(n), en_words(n) if n < MAX_WORDS else "", zh_aligned(n))
    r = random.Random(1)
    for f in FORMS:
        print(f, _draw(r, f, False))
    print(alphabet(), len(alphabet()))
    print(max(len(en_words(n)) for n in range(0, MAX_WORDS, 7)))
