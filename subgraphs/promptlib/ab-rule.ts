/**
 * The A/B recommendation rule, in order:
 *  1. the higher success rate (successful test cases / all test cases) wins;
 *  2. equal success rates: the lower average tokens per successful run wins;
 *  3. equal tokens too: the lower average latency per successful run wins;
 *  4. a full tie, or no successful run on either side: promptA (keep what you have).
 * Averages are compared as reported: tokens to 2 decimals, latency to the millisecond.
 */

export interface ArmSummary {
  successfulTests: number;
  failedTests: number;
  averageTokens: number;
  /** Seconds. */
  averageLatency: number;
}

export interface Recommendation {
  recommendation: 'promptA' | 'promptB';
  reason: string;
}

const pct = (a: ArmSummary) => {
  const n = a.successfulTests + a.failedTests;
  return n ? Math.round((a.successfulTests / n) * 10_000) / 100 : 0;
};

export function recommend(a: ArmSummary, b: ArmSummary): Recommendation {
  if (a.successfulTests === 0 && b.successfulTests === 0) {
    return { recommendation: 'promptA', reason: 'Neither prompt produced a successful run; keeping promptA.' };
  }
  const [ra, rb] = [pct(a), pct(b)];
  if (ra !== rb) {
    const winner = ra > rb ? 'promptA' : 'promptB';
    const [w, l] = ra > rb ? [ra, rb] : [rb, ra];
    return { recommendation: winner, reason: `${winner} succeeded in ${w}% of test cases against ${l}% for ${other(winner)}.` };
  }
  const [ta, tb] = [Math.round(a.averageTokens * 100) / 100, Math.round(b.averageTokens * 100) / 100];
  if (ta !== tb) {
    const winner = ta < tb ? 'promptA' : 'promptB';
    const [w, l] = ta < tb ? [ta, tb] : [tb, ta];
    return {
      recommendation: winner,
      reason: `Both succeeded in ${ra}% of test cases; ${winner} used fewer tokens on average (${w} against ${l}).`,
    };
  }
  const [la, lb] = [Math.round(a.averageLatency * 1000), Math.round(b.averageLatency * 1000)];
  if (la !== lb) {
    const winner = la < lb ? 'promptA' : 'promptB';
    const [w, l] = la < lb ? [la, lb] : [lb, la];
    return {
      recommendation: winner,
      reason: `Both succeeded in ${ra}% of test cases with ${ta} tokens on average; ${winner} answered faster (${w / 1000} s against ${l / 1000} s).`,
    };
  }
  return { recommendation: 'promptA', reason: 'The prompts tie on success rate, tokens and latency; keeping promptA.' };
}

function other(arm: 'promptA' | 'promptB'): 'promptA' | 'promptB' {
  return arm === 'promptA' ? 'promptB' : 'promptA';
}
