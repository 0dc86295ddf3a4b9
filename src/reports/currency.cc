#include "reports/currency.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include <fmt/format.h>

#include "core/model/invoice.h"

namespace allot::billing {
namespace {

// ISO 4217's active currencies whose minor unit is not two decimals; every other active code
// below has two.
constexpr std::array<std::pair<std::string_view, int>, 26> kOtherExponents = {{
    {"BHD", 3}, {"BIF", 0}, {"CLF", 4}, {"CLP", 0}, {"DJF", 0}, {"GNF", 0}, {"IQD", 3},
    {"ISK", 0}, {"JOD", 3}, {"JPY", 0}, {"KMF", 0}, {"KRW", 0}, {"KWD", 3}, {"LYD", 3},
    {"OMR", 3}, {"PYG", 0}, {"RWF", 0}, {"TND", 3}, {"UGX", 0}, {"UYI", 0}, {"UYW", 4},
    {"VND", 0}, {"VUV", 0}, {"XAF", 0}, {"XOF", 0}, {"XPF", 0},
}};

// ISO 4217's active currency codes (funds codes included, precious metals and testing codes
// not: an invoice is not paid in them).
constexpr std::string_view kActiveCodes =
    "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN "
    "BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN "
    "ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD "
    "JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT "
    "MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG "
    "QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT "
    "TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF "
    "XPF YER ZAR ZMW ZWG";

int64_t pow10(int exponent) {
  int64_t out = 1;
  for (int i = 0; i < exponent; ++i) out *= 10;
  return out;
}

}  // namespace

std::optional<Currency> find_currency(std::string_view code) {
  if (code.size() != 3) return std::nullopt;
  for (size_t at = 0; at + 3 <= kActiveCodes.size(); at += 4) {
    if (kActiveCodes.substr(at, 3) != code) continue;
    Currency currency{.code = std::string(code), .exponent = 2};
    for (const auto& [other, exponent] : kOtherExponents) {
      if (other == code) currency.exponent = exponent;
    }
    return currency;
  }
  return std::nullopt;
}

int64_t to_minor_units(int64_t micros, const Currency& currency) {
  // One minor unit is 10^(6 - exponent) micro-units; exponents run 0..4, so the step is whole.
  const int64_t step = pow10(6 - currency.exponent);
  const int64_t whole = micros / step;
  const int64_t rest = micros % step;  // Has micros' sign.
  if (2 * std::abs(rest) >= step) return whole + (micros < 0 ? -1 : 1);
  return whole;
}

std::string minor_units_text(int64_t minor, const Currency& currency) {
  const bool negative = minor < 0;
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(minor) : static_cast<uint64_t>(minor);
  if (currency.exponent == 0) return fmt::format("{}{}", negative ? "-" : "", magnitude);
  const auto step = static_cast<uint64_t>(pow10(currency.exponent));
  return fmt::format("{}{}.{:0{}d}", negative ? "-" : "", magnitude / step, magnitude % step,
                     currency.exponent);
}

std::string money_text(int64_t micros, const Currency& currency) {
  return fmt::format("{} {}", minor_units_text(to_minor_units(micros, currency), currency),
                     currency.code);
}

std::string exact_money_text(int64_t micros, const Currency& currency) {
  const int64_t step = pow10(6 - currency.exponent);
  if (micros % step == 0) {
    return fmt::format("{} {}", minor_units_text(micros / step, currency), currency.code);
  }
  const bool negative = micros < 0;
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  std::string decimals = fmt::format("{:06d}", magnitude % 1'000'000);
  // Trailing zeros beyond the minor unit say nothing.
  while (decimals.size() > static_cast<size_t>(currency.exponent) && decimals.back() == '0') {
    decimals.pop_back();
  }
  return fmt::format("{}{}.{} {}", negative ? "-" : "", magnitude / 1'000'000, decimals,
                     currency.code);
}

MinorAmounts document_amounts(const Invoice& invoice, const Currency& currency) {
  auto round = [&](int64_t value) { return to_minor_units(value, currency); };
  MinorAmounts out;
  for (const InvoiceLine& line : invoice.lines) {
    out.lines.push_back(round(line.amount_micros));
    out.subtotal += out.lines.back();
  }
  out.credits = round(invoice.credits_micros);
  out.total = round(invoice.total_micros);
  out.rounding = out.total - (out.subtotal - out.credits);
  out.credited = round(invoice.credited_micros);
  out.paid_from_balance = round(invoice.payments.paid_micros);
  out.paid = round(invoice.payment_micros);
  out.amount_due =
      std::max<int64_t>(0, out.total - out.credited - out.paid_from_balance - out.paid);
  return out;
}

}  // namespace allot::billing
