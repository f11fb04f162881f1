// SPDX-License-Identifier: MIT
// Threaded test cases of a bank account (the C example examples/bank.c as
// a GoogleTest suite). Account.WithdrawNeverOverdraws is racy: each teller
// checks the balance in one critical section and debits it in a second
// one, so both can pass the check before either debits. Unperturbed runs
// almost never show it; a pause at a lock call does. The other cases are
// correct under every schedule.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

namespace {

class Account {
public:
	explicit Account(long balance) : balance_(balance) {}

	long balance()
	{
		std::lock_guard<std::mutex> g(m_);
		return balance_;
	}
	void debit(long amount)
	{
		std::lock_guard<std::mutex> g(m_);
		balance_ -= amount;
	}
	void deposit(long amount)
	{
		std::lock_guard<std::mutex> g(m_);
		balance_ += amount;
	}
	// Check and debit in one critical section: atomic.
	bool withdraw_atomic(long amount)
	{
		std::lock_guard<std::mutex> g(m_);
		if (balance_ < amount)
			return false;
		balance_ -= amount;
		return true;
	}

private:
	std::mutex m_;
	long balance_;
};

void teller_check_then_act(Account *a, long amount)
{
	if (a->balance() >= amount) // check ...
		a->debit(amount);   // ... then act: not atomic
}

} // namespace

TEST(Account, DepositsAddUp)
{
	Account a(0);
	std::thread t1([&] {
		for (int i = 0; i < 3; i++)
			a.deposit(10);
	});
	std::thread t2([&] {
		for (int i = 0; i < 3; i++)
			a.deposit(5);
	});
	t1.join();
	t2.join();
	EXPECT_EQ(a.balance(), 45);
}

TEST(Account, AtomicWithdrawNeverOverdraws)
{
	Account a(100);
	std::thread t1([&] { a.withdraw_atomic(60); });
	std::thread t2([&] { a.withdraw_atomic(60); });
	t1.join();
	t2.join();
	EXPECT_EQ(a.balance(), 40);
}

TEST(Account, WithdrawNeverOverdraws)
{
	Account a(100);
	std::thread t1(teller_check_then_act, &a, 60);
	std::thread t2(teller_check_then_act, &a, 60);
	t1.join();
	t2.join();
	EXPECT_GE(a.balance(), 0) << "overdrawn: check-then-act race between tellers";
}
