// A clock for tests that fix what time it is but wait on real timers: the scheduler reads the
// Monday they set, while its few real waits (a resume try in milliseconds) still pass.
import { systemClock, type Clock } from '../../server/clock.ts';

export const clockReading = (read: () => Date): Clock => ({ now: read, setTimer: systemClock.setTimer });
