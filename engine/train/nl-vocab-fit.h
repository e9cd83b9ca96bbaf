/* nl-vocab-fit.h — whether a text run's vocabulary fits its network: the
 * ids it gives must lie in the first Embedding's [0, input_dim), or that
 * Embedding reads past its table. Checked before training starts, with one
 * message that names the node and both ways out. */
#pragma once

#include "engine/data/nl-vocab.h"
#include "engine/graph/nl-network.h"

G_BEGIN_DECLS

/* TRUE when vocab is NULL, the network has no Embedding, or the vocabulary
 * has at most input_dim entries of the network's first Embedding; else
 * FALSE with an NL_TRAIN_ERROR_CONFIG error:
 * "the vocabulary has 20002 tokens but Embedding 'embed' takes input_dim
 * 20000: set --vocab-size 20000 or the Embedding's input_dim". */
gboolean nl_vocab_fit_network (const NlNetwork *net, const NlVocab *vocab, GError **error);

G_END_DECLS
