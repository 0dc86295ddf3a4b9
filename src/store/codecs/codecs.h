// Every domain's codecs (store/codecs/codec.h).
#pragma once

#include "store/codecs/admission.h"
#include "store/codecs/books.h"
#include "store/codecs/cluster.h"
#include "store/codecs/identity.h"
#include "store/codecs/kernel.h"
#include "store/codecs/money.h"
#include "store/codecs/pools.h"
#include "store/codecs/regions.h"
