/* SPDX-License-Identifier: BSD-3-Clause */
/* Every check, in the order the report lists them. */
#include "hw_check.h"

extern const struct hw_check hw_check_loopback, hw_check_arm_claim, hw_check_events,
	hw_check_shared_channel, hw_check_report_missed, hw_check_compare,
	hw_check_inline32, hw_check_inline64, hw_check_cqe128, hw_check_compressed,
	hw_check_race, hw_check_race_naive, hw_check_device, hw_check_qp,
	hw_check_srq;

const struct hw_check *const hw_checks[] = {
	&hw_check_loopback,
	&hw_check_arm_claim,
	&hw_check_events,
	&hw_check_shared_channel,
	&hw_check_report_missed,
	&hw_check_compare,
	&hw_check_qp,
	&hw_check_srq,
	&hw_check_inline32,
	&hw_check_inline64,
	&hw_check_cqe128,
	&hw_check_compressed,
	&hw_check_race,
	&hw_check_race_naive,
	&hw_check_device,
};

const size_t hw_nchecks = sizeof(hw_checks) / sizeof(hw_checks[0]);
