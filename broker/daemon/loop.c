/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

struct cordon_watch {
	struct cordon_loop *loop;
	int fd;
	cordon_watch_fn fn;
	void *userdata;
	uint32_t events; /* as last given to epoll_ctl() */
	bool dead;
	struct cordon_watch *next_dead;
};

struct cordon_timer {
	struct cordon_loop *loop;
	uint64_t due;
	cordon_timer_fn fn;
	void *userdata;
	bool dead;
	struct cordon_timer *next;
};

struct cordon_loop {
	int epfd;
	struct cordon_timer *timers; /* unsorted; the daemon keeps few */
	struct cordon_watch *dead;   /* freed after the current dispatch */
	cordon_pass_fn pass_end;
	void *pass_end_userdata;
	bool quit;
	int exit_code;
	unsigned depth;
};

uint64_t cordon_loop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cordon_loop_new(struct cordon_loop **ret)
{
	struct cordon_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int r = -errno;

		free(l);
		return r;
	}
	*ret = l;
	return 0;
}

static void reap_dead(struct cordon_loop *l)
{
	struct cordon_timer **pt = &l->timers;

	while (l->dead) {
		struct cordon_watch *w = l->dead;

		l->dead = w->next_dead;
		free(w);
	}
	while (*pt) {
		struct cordon_timer *t = *pt;

		if (t->dead) {
			*pt = t->next;
			free(t);
		} else
			pt = &t->next;
	}
}

void cordon_loop_free(struct cordon_loop *l)
{
	if (!l)
		return;
	for (struct cordon_timer *t = l->timers; t; t = t->next)
		t->dead = true;
	reap_dead(l);
	closep(&l->epfd);
	free(l);
}

int cordon_loop_watch(struct cordon_loop *l, int fd, uint32_t events, cordon_watch_fn fn, void *userdata,
		      struct cordon_watch **ret)
{
	struct cordon_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = events };

	if (!w)
		return -ENOMEM;
	*w = (struct cordon_watch){ .loop = l, .fd = fd, .fn = fn, .userdata = userdata, .events = events };
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = -errno;

		free(w);
		return r;
	}
	if (ret)
		*ret = w;
	return 0;
}

int cordon_loop_watch_modify(struct cordon_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	/* Watches are level-triggered, so setting the same events again
	 * changes nothing: a flush after every message costs no syscall. */
	if (events == w->events)
		return 0;
	if (epoll_ctl(w->loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	w->events = events;
	return 0;
}

void cordon_loop_unwatch(struct cordon_watch *w)
{
	if (!w || w->dead)
		return;
	(void)epoll_ctl(w->loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->dead = true;
	/* Freed after dispatch: an event for it may still be in this batch. */
	w->next_dead = w->loop->dead;
	w->loop->dead = w;
}

int cordon_loop_timer(struct cordon_loop *l, uint64_t ms, cordon_timer_fn fn, void *userdata, struct cordon_timer **ret)
{
	struct cordon_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	*t = (struct cordon_timer){
		.loop = l, .due = cordon_loop_now_ms() + ms, .fn = fn, .userdata = userdata, .next = l->timers
	};
	l->timers = t;
	if (ret)
		*ret = t;
	return 0;
}

void cordon_loop_timer_cancel(struct cordon_timer *t)
{
	if (t)
		t->dead = true;
}

void cordon_loop_on_pass_end(struct cordon_loop *l, cordon_pass_fn fn, void *userdata)
{
	l->pass_end = fn;
	l->pass_end_userdata = userdata;
}

int cordon_loop_run_once(struct cordon_loop *l, int timeout_ms)
{
	struct epoll_event evs[64];
	uint64_t now = cordon_loop_now_ms();
	int n, ran = 0;

	for (struct cordon_timer *t = l->timers; t; t = t->next) {
		if (t->dead)
			continue;
		if (t->due <= now)
			timeout_ms = 0;
		else if (timeout_ms < 0 || t->due - now < (uint64_t)timeout_ms)
			timeout_ms = (int)(t->due - now);
	}
	n = epoll_wait(l->epfd, evs, (int)ELEMENTSOF(evs), timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		return -errno;
	}
	/* A callback may run the loop again (cordond takes a connector's
	 * inventory synchronously inside an operator request): dead watches
	 * and timers are freed only when the outermost iteration is done,
	 * since the outer batch and timer walk still point at them. */
	l->depth++;
	for (int i = 0; i < n; i++) {
		struct cordon_watch *w = evs[i].data.ptr;

		if (w->dead)
			continue;
		w->fn(l, w->fd, evs[i].events, w->userdata);
		ran++;
	}
	now = cordon_loop_now_ms();
	for (struct cordon_timer *t = l->timers; t; t = t->next) {
		if (t->dead || t->due > now)
			continue;
		t->dead = true; /* one-shot; the callback may add new timers at the head */
		t->fn(l, t->userdata);
		ran++;
	}
	if (l->pass_end)
		l->pass_end(l, l->pass_end_userdata);
	if (--l->depth == 0)
		reap_dead(l);
	return ran;
}

int cordon_loop_run(struct cordon_loop *l)
{
	l->quit = false;
	while (!l->quit) {
		int r = cordon_loop_run_once(l, -1);

		if (r < 0)
			return r;
	}
	return l->exit_code;
}

void cordon_loop_quit(struct cordon_loop *l, int code)
{
	l->quit = true;
	l->exit_code = code;
}
