// mulberry32: a small seeded generator with the same sequence on every machine, so whatever a test
// draws from it (a flood's addresses, a round's faults, a scenario's choices) replays from its seed.

export interface SeededRandom {
  /** In [0, 1). */
  next(): number;
  /** An integer from `min` to `max`, both included. */
  int(min: number, max: number): number;
  /** True with probability `p` (0 to 1). */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}
