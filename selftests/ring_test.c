// SPDX-License-Identifier: GPL-2.0
/*
 * The rings under pressure: a full ring drops instead of overwriting, the
 * drops are counted exactly (ring headers, INFO, LOST records), records wrap
 * around the end of the data area intact, and a reader's nonsense data_tail
 * makes the ring count as full instead of letting the module write anywhere.
 */
#include <pthread.h>

#include "kselftest_harness.h"

#include "cycsample_test_lib.h"

#define MAX_RINGS 64

FIXTURE(ring)
{
	pid_t child;
	struct cs_session s;
	struct cs_recs recs;
	__u64 lost_at_stop[MAX_RINGS], samples_at_stop[MAX_RINGS];
};

FIXTURE_SETUP(ring)
{
	self->child = -1;
	self->s.fd = -1;
}

FIXTURE_TEARDOWN(ring)
{
	cs_kill(self->child);
	cs_session_close(&self->s);
	cs_recs_free(&self->recs);
	cs_reset_sample_rate();
}

#define RING_BEGIN()                    \
	do {                            \
		CS_REQUIRE_DEVICE();    \
		CS_REQUIRE_ROOT();      \
		cs_reset_sample_rate(); \
	} while (0)

/* Rings fill at the rate samples come; give a large page size the time it needs. */
#define FILL_DEADLINE_MS 20000

static bool some_ring_lost(const struct cs_session *s)
{
	unsigned int i;

	for (i = 0; i < s->info.nr_rings; i++)
		if (cs_ring(s, i)->lost)
			return true;
	return false;
}

static __u64 max_data_head(const struct cs_session *s)
{
	__u64 max = 0;
	unsigned int i;

	for (i = 0; i < s->info.nr_rings; i++)
		if (cs_ring(s, i)->data_head > max)
			max = cs_ring(s, i)->data_head;
	return max;
}

/*
 * A session with the smallest rings on a busy child, run for @ms without
 * reading and longer if no ring has dropped a sample yet (the smallest ring
 * is two pages, 8 KiB or 32 KiB or 128 KiB), then stopped.  Leaves the
 * per-ring counters at STOP in self.  User chains make the records
 * bigger; @flags CYCSAMPLE_CFG_PC_ONLY makes them 48 bytes instead.
 */
static void overflow_without_reading(struct __test_metadata *_metadata, FIXTURE_DATA(ring) * self,
				     unsigned int ms, __u32 flags)
{
	struct cycsample_config cfg;
	unsigned int i;

	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	cfg.ring_pages = CYCSAMPLE_MIN_RING_PAGES;
	cfg.flags = flags ?: CYCSAMPLE_CFG_USER_CHAIN;
	cfg.sample_period = CS_PERIOD / 4;
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_GE(MAX_RINGS, self->s.info.nr_rings);
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_sleep_ms(ms);
	for (; !some_ring_lost(&self->s) && ms < FILL_DEADLINE_MS; ms += 100)
		cs_sleep_ms(100);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	ASSERT_EQ(0, cs_session_info(&self->s));
	for (i = 0; i < self->s.info.nr_rings; i++) {
		self->lost_at_stop[i] = cs_ring(&self->s, i)->lost;
		self->samples_at_stop[i] = cs_ring(&self->s, i)->samples;
	}
}

TEST_F_TIMEOUT(ring, full_ring_drops_and_keeps_unread_records, 60)
{
	__u64 sum_lost = 0, sum_samples = 0;
	unsigned int i;
	size_t r;

	RING_BEGIN();
	overflow_without_reading(_metadata, self, 1000, 0);
	for (i = 0; i < self->s.info.nr_rings; i++) {
		sum_lost += self->lost_at_stop[i];
		sum_samples += self->samples_at_stop[i];
		if (self->lost_at_stop[i]) {
			/* Nearly full: the dropped sample did not fit. */
			EXPECT_GT(CYCSAMPLE_MAX_RECORD_SIZE,
				  self->s.info.ring_data_size - cs_ring_unread(&self->s, i))
			TH_LOG("ring %u dropped samples with room to spare", i);
		}
	}
	ASSERT_LT(0, self->s.info.lost)
	TH_LOG("a %llu-byte ring never filled", (unsigned long long)self->s.info.ring_data_size);
	EXPECT_EQ(self->s.info.lost, sum_lost);
	EXPECT_EQ(self->s.info.samples, sum_samples);
	TH_LOG("%llu-byte rings, reader asleep: %llu samples kept, %llu lost",
	       (unsigned long long)self->s.info.ring_data_size, (unsigned long long)sum_samples,
	       (unsigned long long)sum_lost);

	cs_drain(&self->s, &self->recs);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	/* Every written sample is still there, from position 0 on, in order. */
	for (i = 0; i < self->s.info.nr_rings; i++) {
		__u64 n = 0, lost = 0, expect_pos = 0;

		for (r = 0; r < self->recs.n; r++) {
			const struct cs_rec *rec = &self->recs.v[r];

			if (rec->ring != i)
				continue;
			ASSERT_EQ(expect_pos, rec->pos);
			expect_pos += cs_hdr(rec)->size;
			if (cs_hdr(rec)->type == CYCSAMPLE_REC_SAMPLE)
				n++;
			else if (cs_hdr(rec)->type == CYCSAMPLE_REC_LOST)
				lost += ((const struct cycsample_lost *)rec->buf)->lost;
		}
		EXPECT_EQ(self->samples_at_stop[i], n) TH_LOG("ring %u", i);
		EXPECT_GE(self->lost_at_stop[i], lost) TH_LOG("ring %u", i);
		EXPECT_EQ(expect_pos, cs_ring(&self->s, i)->data_head) TH_LOG("ring %u", i);
	}
}

/* Drops on ring @i not yet reported by a LOST record among recs[0, n). */
static __u64 unreported(FIXTURE_DATA(ring) * self, unsigned int i, size_t n)
{
	__u64 reported = 0;
	size_t r;

	for (r = 0; r < n; r++)
		if (self->recs.v[r].ring == i &&
		    cs_hdr(&self->recs.v[r])->type == CYCSAMPLE_REC_LOST)
			reported += ((const struct cycsample_lost *)self->recs.v[r].buf)->lost;
	return self->lost_at_stop[i] - reported;
}

/* Drain every 2 ms for @ms: a reader fast enough that nothing is dropped. */
static void drain_fast(FIXTURE_DATA(ring) * self, unsigned int ms)
{
	uint64_t end = cs_now_ms() + ms;

	while (cs_now_ms() < end) {
		cs_drain(&self->s, &self->recs);
		cs_sleep_ms(2);
	}
	cs_drain(&self->s, &self->recs);
}

TEST_F_TIMEOUT(ring, lost_records_add_up_to_the_header_counts, 60)
{
	__u64 lost_records[MAX_RINGS] = { 0 }, pending, total = 0;
	unsigned int i;
	size_t first_new, r;

	RING_BEGIN();
	overflow_without_reading(_metadata, self, 1000, 0);
	ASSERT_LT(0, self->s.info.lost);
	cs_drain(&self->s, &self->recs);
	first_new = self->recs.n;

	/* Space is back and the reader keeps up: the drops get reported. */
	ASSERT_EQ(0, cs_start(self->s.fd));
	drain_fast(self, 400);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);

	/* Drops still unreported at the first STOP come first in their ring. */
	for (i = 0; i < self->s.info.nr_rings; i++) {
		for (r = first_new; r < self->recs.n; r++)
			if (self->recs.v[r].ring == i)
				break;
		pending = unreported(self, i, first_new);
		if (r == self->recs.n || !pending)
			continue;
		ASSERT_EQ(CYCSAMPLE_REC_LOST, cs_hdr(&self->recs.v[r])->type) TH_LOG("ring %u", i);
		EXPECT_EQ(pending, ((const struct cycsample_lost *)self->recs.v[r].buf)->lost)
		TH_LOG("ring %u", i);
	}

	for (r = 0; r < self->recs.n; r++)
		if (cs_hdr(&self->recs.v[r])->type == CYCSAMPLE_REC_LOST)
			lost_records[self->recs.v[r].ring] +=
				((const struct cycsample_lost *)self->recs.v[r].buf)->lost;
	for (i = 0; i < self->s.info.nr_rings; i++) {
		EXPECT_EQ(cs_ring(&self->s, i)->lost, lost_records[i]) TH_LOG("ring %u", i);
		total += lost_records[i];
	}
	EXPECT_EQ(self->s.info.lost, total);
	TH_LOG("%llu drops, all reported by LOST records once the reader caught up",
	       (unsigned long long)total);
}

/*
 * The ring headers' samples and lost, INFO's and the records agree, after
 * drops and after a second run that the reader keeps up with.
 */
static void counters_agree(struct __test_metadata *_metadata, FIXTURE_DATA(ring) * self,
			   __u32 flags)
{
	__u64 sum_lost = 0, sum_samples = 0;
	struct cs_counts c;
	unsigned int i;

	overflow_without_reading(_metadata, self, 700, flags);
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_collect_for(&self->s, 700, &self->recs);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &c);
	for (i = 0; i < self->s.info.nr_rings; i++) {
		sum_lost += cs_ring(&self->s, i)->lost;
		sum_samples += cs_ring(&self->s, i)->samples;
	}
	EXPECT_EQ(c.samples, self->s.info.samples);
	EXPECT_EQ(self->s.info.samples, sum_samples);
	EXPECT_EQ(self->s.info.lost, sum_lost);
	ASSERT_LT(0, c.lost_records);
	EXPECT_GE(self->s.info.lost, c.lost);
	/* every sample of a PC_ONLY session is a SAMPLE_PC record */
	EXPECT_EQ(flags & CYCSAMPLE_CFG_PC_ONLY ? c.samples : 0, c.pc_only);
}

TEST_F_TIMEOUT(ring, counters_agree_between_headers_info_and_records, 60)
{
	RING_BEGIN();
	counters_agree(_metadata, self, 0);
}

/* The same with 48-byte SAMPLE_PC records: in place, at the wrap, after a LOST record. */
TEST_F_TIMEOUT(ring, counters_agree_with_pc_only_samples, 60)
{
	RING_BEGIN();
	counters_agree(_metadata, self, CYCSAMPLE_CFG_PC_ONLY);
}

TEST_F_TIMEOUT(ring, records_wrap_around_the_end_intact, 60)
{
	struct cycsample_config cfg;
	unsigned long straddling = 0;
	unsigned int ms = 0;
	size_t r;

	RING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	cfg.ring_pages = CYCSAMPLE_MIN_RING_PAGES;
	cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	cfg.wakeup_bytes = 512;
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	/* at least 1.5 s, and until some ring wrapped twice */
	do {
		cs_collect_for(&self->s, 500, &self->recs);
		ms += 500;
	} while (ms < 1500 || (max_data_head(&self->s) <= 2 * self->s.info.ring_data_size &&
			       ms < FILL_DEADLINE_MS));
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	ASSERT_LT(2 * self->s.info.ring_data_size, max_data_head(&self->s))
	TH_LOG("no ring wrapped twice in %u ms", ms);
	TH_LOG("%llu-byte rings: the fullest wrapped %llu times in %u ms",
	       (unsigned long long)self->s.info.ring_data_size,
	       (unsigned long long)(max_data_head(&self->s) / self->s.info.ring_data_size), ms);
	for (r = 0; r < self->recs.n; r++) {
		const struct cs_rec *rec = &self->recs.v[r];
		__u64 off = rec->pos & (self->s.info.ring_data_size - 1);

		straddling += off + cs_hdr(rec)->size > self->s.info.ring_data_size;
	}
	EXPECT_LT(0, straddling) TH_LOG("no record crossed the end of the data area");
}

static void *spin_on_cpu0(void *arg)
{
	cs_pin(0, 0);
	cs_spin_outer();
}

/* Child: a spinning thread on the first CPU and one on the last (cs_spawn()). */
static int spin_on_two_cpus(void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, spin_on_cpu0, NULL))
		return 1;
	cs_spin_outer();
}

/* Each ring, its tail set ahead of head or far behind, gets samples to refuse. */
TEST_F_TIMEOUT(ring, nonsense_data_tail_makes_the_ring_full, 60)
{
	struct cycsample_config cfg;
	__u64 heads[MAX_RINGS];
	unsigned int i, refused = 0;
	struct cs_counts c;

	RING_BEGIN();
	self->child = cs_spawn(spin_on_two_cpus, NULL);
	ASSERT_LT(0, self->child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	cfg.ring_pages = 8;
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_GE(MAX_RINGS, self->s.info.nr_rings);
	for (i = 0; i < self->s.info.nr_rings; i++) {
		struct cycsample_ring_header *h = cs_ring(&self->s, i);

		heads[i] = h->data_head;
		/* Ahead of head, or far behind it: both outside [head - size, head]. */
		h->data_tail = i % 2 ? heads[i] + 8 : heads[i] - 2 * self->s.info.ring_data_size;
	}
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_sleep_ms(500);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	ASSERT_EQ(0, cs_session_info(&self->s));
	for (i = 0; i < self->s.info.nr_rings; i++) {
		EXPECT_EQ(heads[i], cs_ring(&self->s, i)->data_head) TH_LOG("ring %u written", i);
		refused += cs_ring(&self->s, i)->lost != 0;
	}
	EXPECT_EQ(0, self->s.info.samples);
	EXPECT_LT(0, self->s.info.lost);
	/* a tail ahead and a tail behind, each refused something */
	EXPECT_LE(cs_nr_online_cpus() >= 2 ? 2 : 1, refused) TH_LOG("rings that lost samples");

	/* A sane tail again: records flow, starting with the LOST count. */
	for (i = 0; i < self->s.info.nr_rings; i++)
		cs_ring(&self->s, i)->data_tail = heads[i];
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_collect_for(&self->s, 500, &self->recs);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &c);
	EXPECT_LT(0, c.samples);
	EXPECT_LT(0, c.lost_records);
}

TEST_HARNESS_MAIN
