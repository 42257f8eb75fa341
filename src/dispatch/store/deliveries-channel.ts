/** The NOTIFY channel on which a commit that created due work wakes every worker. */
export const DELIVERIES_CHANNEL = 'hookline_deliveries';
