/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event loop run again from inside a callback (cordond takes a
 * connector's inventory synchronously inside an operator request): watches
 * and timers that die in the inner run must stay valid until the outer
 * iteration is done, because the outer batch still points at them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"

struct ctx {
	struct cordon_loop *loop;
	struct cordon_watch *a, *b;
	int pa[2], pb[2];
	int a_runs, b_runs, timer_runs;
};

static void on_b(struct cordon_loop *l, int fd, uint32_t ev, void *u)
{
	struct ctx *c = u;
	char x;

	(void)l;
	(void)ev;
	(void)!read(fd, &x, 1);
	c->b_runs++;
	/* Dies inside the inner run; the outer batch may still hold it. */
	cordon_loop_unwatch(c->b);
}

static void on_timer(struct cordon_loop *l, void *u)
{
	(void)l;
	((struct ctx *)u)->timer_runs++;
}

static void on_a(struct cordon_loop *l, int fd, uint32_t ev, void *u)
{
	struct ctx *c = u;
	char x;

	(void)ev;
	(void)!read(fd, &x, 1);
	c->a_runs++;
	(void)cordon_loop_timer(l, 0, on_timer, c, NULL);
	/* Nested iterations, as cordond's connector_add does. */
	for (int i = 0; i < 3; i++)
		(void)cordon_loop_run_once(l, 10);
}

static void test_nested_run_keeps_dead_watches_until_outer_is_done(void **state)
{
	struct ctx c = {};

	(void)state;
	assert_int_equal(cordon_loop_new(&c.loop), 0);
	assert_int_equal(pipe(c.pa), 0);
	assert_int_equal(pipe(c.pb), 0);
	assert_int_equal(cordon_loop_watch(c.loop, c.pa[0], EPOLLIN, on_a, &c, &c.a), 0);
	assert_int_equal(cordon_loop_watch(c.loop, c.pb[0], EPOLLIN, on_b, &c, &c.b), 0);
	/* Both readable: one outer batch with both events. */
	assert_int_equal(write(c.pa[1], "x", 1), 1);
	assert_int_equal(write(c.pb[1], "x", 1), 1);
	assert_true(cordon_loop_run_once(c.loop, 100) >= 1);
	assert_int_equal(c.a_runs, 1);
	/* b ran exactly once (in the inner or outer run, never after dying). */
	assert_int_equal(c.b_runs, 1);
	assert_int_equal(c.timer_runs, 1);
	/* Nothing left to run; the loop is intact. */
	assert_int_equal(cordon_loop_run_once(c.loop, 0), 0);
	cordon_loop_unwatch(c.a);
	cordon_loop_free(c.loop);
	close(c.pa[0]);
	close(c.pa[1]);
	close(c.pb[0]);
	close(c.pb[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_run_keeps_dead_watches_until_outer_is_done),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
