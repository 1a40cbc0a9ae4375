"""raffle: a marketing raffle platform with exact odds, no oversell and reliable delivery."""
