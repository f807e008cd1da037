"""ISO 4217 currency codes: the currencies a config value or a bill line may name.

Money is never added across currencies, so a currency code is a key of the books: `USD ` or `usd` or a
made-up `XYZ` would open a currency of its own that no fx rate converts and no report sums with the real
one. Every code is therefore checked against ISO 4217 List One, the active codes (the ISO 4217
Maintenance Agency's list as of 2025-2026, after the Caribbean guilder XCG replaced ANG and the euro
replaced BGN). Two codes of the list are left out on purpose: XTS (reserved for testing) and XXX (no
currency at all) are not currencies an amount can be in.

`check_currency(code)` is the one check (config values, bill files' BillingCurrency): None when the code
is a current code written as ISO writes it, otherwise a sentence saying what is wrong and, where it can
tell, the code that was meant.
"""

from __future__ import annotations

import difflib

# ISO 4217 List One, active alphabetic codes (currencies and funds, precious metals, SDR), less XTS, XXX.
ISO_4217: frozenset[str] = frozenset("""
AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD
CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP
GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR
KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN
MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD
SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX
USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF
XPT XSU XUA YER ZAR ZMW ZWG
""".split())

# codes withdrawn from List One in recent years -> the code that replaced them, so the error can say so
WITHDRAWN: dict[str, str] = {
    "ANG": "XCG", "BGN": "EUR", "CUC": "CUP", "HRK": "EUR", "SLL": "SLE", "ZWL": "ZWG",
    "VEF": "VES", "MRO": "MRU", "STD": "STN", "BYR": "BYN", "LTL": "EUR", "LVL": "EUR",
}
NOT_A_CURRENCY: dict[str, str] = {"XTS": "reserved for testing", "XXX": "the code for no currency"}


def check_currency(code: object) -> str | None:
    """None when `code` is an active ISO 4217 code, in upper case; otherwise the error, a sentence
    naming the value (and the code probably meant: `usd` -> did you mean USD?)."""
    if not isinstance(code, str):
        return f"{code!r} is not a currency code: write an ISO 4217 code such as USD, in quotes if need be"
    if code in ISO_4217:
        return None
    folded = code.strip().upper()
    if folded in ISO_4217:
        return f"{code!r} is not an ISO 4217 currency code as written: did you mean {folded}?"
    if folded in WITHDRAWN:
        return (f"{code!r} was withdrawn from ISO 4217 (replaced by {WITHDRAWN[folded]}): "
                f"did you mean {WITHDRAWN[folded]}?")
    if folded in NOT_A_CURRENCY:
        return f"{code!r} is ISO 4217's {NOT_A_CURRENCY[folded]}, not a currency an amount can be in"
    close = difflib.get_close_matches(folded, sorted(ISO_4217), n=1, cutoff=0.6)
    hint = f": did you mean {close[0]}?" if close else " (three upper-case letters, e.g. USD, EUR, JPY)"
    return f"{code!r} is not an ISO 4217 currency code{hint}"
