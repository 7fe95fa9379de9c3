// Random stretches that once broke a promise, each a fault since mended in the code or in the
// simulation's own model, replayed by fast-check's seed and path in every run on both stores. A
// stretch's kills and faults fall on store calls by count, so a change in what the code calls can
// steer it away from the fault it found: a hole that must stay shut is also written out by hand
// in known-holes.ts, which names the calls.
/** Random stretches that once broke a promise, replayed by fast-check's seed and path. */
export const FOUND_STRETCHES = [
  { seed: 1918638746, path: '1', name: 'a DIGEST_CRON moved later in the week does not tell a week already dealt with missed again' },
  { seed: 654501920, path: '0', name: 'a refusal that begins before the provider took mail again continues the hold: told once' },
  { seed: 20261128, path: '1', name: 'a worker killed mid-batch while the sender is refused for days leaves no message unknown' },
  { seed: 20261128, path: '4', name: "a deploy changing DIGEST_CRON while last week's run is resumed hands that run on instead of telling it missed" },
  { seed: 20261128, path: '5', name: 'a confirmation whose answer was lost but which reached its reader is not lost' },
  { seed: 20261128, path: '8', name: "a server killed at the tick's instant before claiming it leaves a late run, tried only until DIGEST_CATCHUP_HOURS: a refusal over those hours leaves the week missed, and told" },
  { seed: 20261128, path: '7', name: 'a backup restored across a DIGEST_CRON change does not tell the new schedule\'s earlier tick missed' },
  { seed: 1173478835, path: '5', name: 'a confirmation whose try had no answer before a day without servers goes out under a fresh key, not lost' },
  { seed: 1871890610, path: '10', name: 'a batch rate limited at the tick, then the sender refused for 30 hours: its readers get the week in a new batch, not unknown' },
  { seed: 1499069748, path: '6', name: 'a server started at the very instant of the tick runs that week late and tells it once' },
  { seed: 1607410747, path: '12', name: 'a server killed right after recording a missed tick has queued its notice with the record: the operator is told' },
  { seed: -369104937, path: '26', name: 'a backup restored from before a hold was told tells the hold again, and only then' },
  { seed: -1698123291, path: '48', name: 'a backup restored from before a missed tick was recorded tells that tick again with the next miss' },
  { seed: 7, path: '31', name: 'a worker killed right after recording a hold of the sender has queued its notice with the record: the operator is told' },
  { seed: 7, path: '88', name: 'a server killed after its late run sent the week, before it settled the tick, leaves the tick to the next server, which tells the week late' },
  { seed: 7, path: '60', name: 'a batch written by a run killed before trying it, found a day later, goes to its readers under a new key instead of turning unknown' },
  { seed: 519753058, path: '60', name: 'a batch that turns unknown while the sender stays refused is told, though the stop was told already' },
  { seed: -831897366, path: '52', name: 'a hold told only by its queued notice, with two backups restored later, is counted at the hour it was told' },
  { seed: 7, path: '68', name: 'a batch whose writer died between recording its attempt and sending it, then a day of refusals, is left unknown and told, never sent twice' },
  { seed: 7, path: '76', name: 'a refusal met only by a worker that died as the mail was queued, over before any server ran again, needs no notice' },
  { seed: -86107463, path: '50', name: 'a batch that met a server error, then a sender refused past its key\'s day, is left unknown (never a second copy) and the operator is told' },
  { seed: -1528790034, path: '8', name: "a DIGEST_CRON moved an hour later while every server was down over the old schedule's tick: that tick is told missed, though the new schedule's tick fell while the old one was in force" },
  { seed: -1193355279, path: '5', name: 'a refusal met only by a worker that died at it, while another server stayed up without trying the mail, needs no notice: no live server knew of a hold' },
];
