// Package cover keeps a light client's cover scripts: scripts of other
// people that the chain carries, whose blocks the client fetches beside
// its wallet's so that a peer watching the downloads cannot tell which
// matched scripts are the wallet's. The set must be the same in every
// session and only ever grow: covers drawn anew each run, or dropped,
// are told apart from the wallet by intersecting two sessions. So the
// set lives in one file per data directory, DataDir/<network>/covers.dat,
// beside the chain store and under its lock (open a Set only while the
// store of its directory is open), written with the permission bits 0600
// (whoever reads it can subtract the covers).
//
// # Format
//
// Varints are unsigned LEB128 (encoding/binary's Uvarint), at most
// their shortest form's length.
//
//	magic     8 bytes: "SPVFCOV" and the version, 0x06 (0x01 to 0x05
//	          are read too: files of before the exploration state, read
//	          with none, of before the blocks explored in the scans
//	          short in a row and the false matches, read with none, of
//	          before the range of those scans, read with none, of
//	          before the entries' riders, read with none known, and of
//	          before the decoys, read with none)
//	network   varint length (1..64), then the network's name
//	seed      32 bytes, random when the file was first made: keys every
//	          draw of covers, so that draws are repeatable per data
//	          directory and unknown to anyone else
//	chance    varint K (0..MaxClass), then K pairs of varints: a class k
//	          (1..MaxClass, increasing) and the chance groups of class k
//	          the client counted at its last scan, times 1000
//	covers    varint C (0..MaxCovers), then C entries (below)
//	reserve   varint R (0..MaxReserve), then R entries: scripts profiled
//	          and not yet in use
//	explore   (version 2) varints: the client's scans in a row whose
//	          covers fell short of the target (0..65536), and how far
//	          its sweep of the range's blocks for candidates has gone;
//	          (version 3) a varint: the blocks the sweep gave the scans
//	          short in a row (below 2^32); (version 4) two varints: the
//	          first and last heights of the range those scans scanned
//	          (below 2^31) (Explore)
//	false     (version 3) varint N (0..MaxRefuted), then N keys of 8
//	          bytes in increasing order, none twice: filter matches of
//	          the client's watched scripts that the blocks, fetched,
//	          showed false (BIP 158 false positives), each the first 8
//	          bytes of SHA-256 of the block's hash and the script
//	          (MatchKeyOf), so that profiles leave them out
//	decoys    (version 6) varint D (0..MaxDecoys), then D scripts, each
//	          a varint length L (1..MaxScript) and L bytes of an output
//	          script a basic filter holds, none twice, in the order
//	          kept: scripts neither watched nor covers whose blocks the
//	          client fetched on purpose (candidate chains explored, and
//	          those drawn and left out, fetched once), which match by
//	          construction: the client's leak report leaves the groups
//	          holding them out of its chance count (leak.Input.Decoys),
//	          in every later session too, since the peers keep what they
//	          were asked
//	checksum  4 bytes, little endian: the CRC-32C (Castagnoli) of every
//	          byte before it, from the magic on
//
// An entry is a varint length L (1..MaxScript) and L bytes of an output
// script that a BIP 158 basic filter holds (not empty, no OP_RETURN);
// then its profile: a byte class (1..MaxClass, MaxClass meaning that
// many appearances or more), a byte script type (0..MaxType), and
// varints: the height of its first appearance, the height it was drawn
// at (both below 2^31), its group (below) and, from version 5, its
// riders: the count of the other scripts of its transactions (outputs,
// and the scripts inputs show they spend, of a type the attack names)
// over the appearances whose blocks were read, below 2^32, and the
// count of those appearances, below 2^16 (0: none read, and then no
// riders; a peer reading the blocks sees the riders beside a script,
// so covers are drawn with riders per appearance like the wallet's
// scripts'). The group: for a cover, the chain it was
// drawn with (a cover chain is drawn whole, shaped like a chain of the
// wallet's, since the block-download attack sees a chain as one group),
// for a script in reserve, the candidate chain it was found in (the
// scripts of a transaction and of those spending one another's outputs
// among the blocks it came from); 0 and a group of one script alike
// mean a script alone (files written before covers were drawn in
// chains hold such groups, and read as covers drawn alone). No script
// appears twice in a file.
//
// A file is read whole within MaxFileSize bytes and checked before use:
// magic and version, checksum, every count and length against its bound
// and against the bytes left, each field's range, and the network. A
// file that fails is damaged. Open then uses covers.dat.prev, the good
// file before the last save, if it is good, saying that the covers drawn
// since are lost; otherwise it sets the damaged file aside (as
// covers.dat.damaged-<unix time>) and fails with a *DamagedError, since
// drawing a new set in silence would break the target against anyone
// who kept earlier sessions. Options.New accepts a new set instead, and
// Options.Existing makes a missing file damage (the store beside it holds
// a chain, so the file was deleted) rather than a first run.
//
// Save writes the file whole or not at all: the good file before it to
// covers.dat.prev, then the new one, each to a temporary file renamed
// into place and synced, with the directory.
package cover
