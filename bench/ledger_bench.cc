// Durable ledger transfers per second: transfers applied to the in-memory ledger and written to
// its journal in batches, each batch one transaction that is durable when it returns (SQLite:
// WAL, synchronous=FULL; PostgreSQL: a commit). Then the journal is replayed and checked against
// the ledger in memory, so what was counted was really stored.
//
//   ledger_bench [--transfers 1000000] [--batch 8192] [--accounts 1000] [--postgres URL]
//
// Without --postgres it uses a fresh SQLite database in a temporary directory. Half the
// transfers top up a prepaid tenant account from the operator's, half charge one to revenue, so
// the balance limits are checked on every second transfer. One JSON line.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "store/store.h"

namespace {

using allot::ledger::Transfer;

int run(size_t total, size_t batch, size_t account_count, const std::string& postgres) {
  std::filesystem::path dir;
  allot::Result<std::unique_ptr<allot::Store>> store;
  if (postgres.empty()) {
    dir = std::filesystem::temp_directory_path() / fmt::format("allot-ledger-{}", getpid());
    std::filesystem::create_directories(dir);
    store = allot::open_sqlite_store((dir / "allot.db").string());
  } else {
    store = allot::open_postgres_store(postgres);
  }
  if (!store) throw std::runtime_error(store.error().message);
  allot::ledger::Ledger ledger;
  const allot::TimeMs t0 = 1'796'083'200'000;
  std::vector<allot::ledger::Account> accounts = {{.id = "operator", .code = "operator"},
                                                  {.id = "revenue", .code = "revenue"}};
  for (size_t i = 0; i < account_count; ++i) {
    accounts.push_back({.id = fmt::format("cash-{}", i),
                        .code = "tenant_cash",
                        .debits_must_not_exceed_credits = true});
  }
  for (auto& a : accounts) {
    if (auto ok = ledger.create_account(a, t0); !ok) throw std::runtime_error(ok.error().message);
    a = *ledger.account(a.id);
  }
  if (auto ok = (*store)->put_ledger_accounts(accounts); !ok) {
    throw std::runtime_error(ok.error().message);
  }
  // The requests are made before the clock starts: what is timed is the ledger and its journal.
  std::mt19937_64 rng(42);
  std::vector<Transfer> requests;
  requests.reserve(total);
  for (size_t k = 0; k < total; ++k) {
    const std::string tenant = fmt::format("cash-{}", rng() % account_count);
    const bool topup = k % 2 == 0;
    requests.push_back(Transfer{.id = fmt::format("t{}", k),
                                .debit_account_id = topup ? "operator" : tenant,
                                .credit_account_id = topup ? tenant : "revenue",
                                .amount = static_cast<int64_t>(1 + rng() % 10'000'000),
                                .code = topup ? "topup" : "usage"});
  }
  size_t applied = 0, refused = 0;
  const auto begin = std::chrono::steady_clock::now();
  for (size_t done = 0; done < total; done += batch) {
    const auto pending = std::span(requests).subspan(done, std::min(batch, total - done));
    const size_t first = ledger.requests().size();
    const allot::TimeMs now = t0 + static_cast<allot::TimeMs>(done);
    for (const allot::Status& result : ledger.create_transfers(pending, now)) {
      result ? ++applied : ++refused;
    }
    auto fresh = std::span(ledger.requests()).subspan(first);
    if (auto ok = (*store)->append_transfers(fresh, static_cast<int64_t>(first)); !ok) {
      throw std::runtime_error(ok.error().message);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  store->reset();
  store = postgres.empty() ? allot::open_sqlite_store((dir / "allot.db").string())
                           : allot::open_postgres_store(postgres);
  if (!store) throw std::runtime_error(store.error().message);
  const auto replay_begin = std::chrono::steady_clock::now();
  auto loaded = (*store)->load_ledger();
  if (!loaded) throw std::runtime_error(loaded.error().message);
  const double replay_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - replay_begin).count();
  const bool same = loaded->accounts() == ledger.accounts();
  std::cout << nlohmann::json{{"backend", (*store)->backend()},
                              {"transfers", total},
                              {"batch", batch},
                              {"applied", applied},
                              {"refused_insufficient", refused},
                              {"seconds", seconds},
                              {"durable_transfers_per_s",
                               std::round(static_cast<double>(total) / seconds)},
                              {"replay_seconds", replay_s},
                              {"replayed_balances_equal", same},
                              {"sum_zero", loaded->sums().posted == 0}}
                   .dump()
            << "\n";
  if (!dir.empty()) std::filesystem::remove_all(dir);
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("durable ledger transfers per second");
  size_t total = 1'000'000, batch = 8'192, accounts = 1'000;
  std::string postgres;
  app.add_option("--transfers", total, "how many transfers")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "transfers per transaction")->check(CLI::PositiveNumber);
  app.add_option("--accounts", accounts, "prepaid tenant accounts")->check(CLI::PositiveNumber);
  app.add_option("--postgres", postgres, "a PostgreSQL URL (default: SQLite in a temp dir)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(total, batch, accounts, postgres);
  } catch (const std::exception& e) {
    std::cerr << "ledger_bench: " << e.what() << "\n";
    return 2;
  }
}
